/// Certificates for the test server's TLS mode: a private CA, and a server certificate it signed
/// for `localhost` and `127.0.0.1`, valid until 2126.
///
/// Test fixtures only: the private key is public, so never trust this CA outside tests.
/// They were made with `openssl` (P-256 keys): a self-signed CA with `CA:TRUE`, and a server
/// certificate with `subjectAltName=DNS:localhost,IP:127.0.0.1` and `extendedKeyUsage=serverAuth`.
public enum TestCertificates {
    /// The CA certificate (PEM): trust this to reach the server over TLS.
    public static let caPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBmzCCAUGgAwIBAgIUeXSCUgVmmbehOw4bKqFxVRJqPxowCgYIKoZIzj0EAwIw
        GjEYMBYGA1UEAwwPQ291cmllciBUZXN0IENBMCAXDTI2MTEyMTA3MTMxM1oYDzIx
        MjYxMDI4MDcxMzEzWjAaMRgwFgYDVQQDDA9Db3VyaWVyIFRlc3QgQ0EwWTATBgcq
        hkjOPQIBBggqhkjOPQMBBwNCAAQoIPErKYBhqUDleOd9Kq8MqXjvZmlw1BdpwVXN
        DfjA94wHdoZzVdNAzflXvTCCNnoUm9yyy/iNlbq3m1nX7+Ogo2MwYTAdBgNVHQ4E
        FgQUoIgE7/EsSmEK2WnJkvd5+8wT8NwwHwYDVR0jBBgwFoAUoIgE7/EsSmEK2WnJ
        kvd5+8wT8NwwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZI
        zj0EAwIDSAAwRQIgULC2GKV0HKZkx6VX2jpBb71s1OXs/IAvQZ7/vyEHPnoCIQCL
        0zC60BgCO5ZVLvTdLTHAjymFK25W1xsBAQyz9rysXw==
        -----END CERTIFICATE-----
        """

    /// The server's certificate (PEM).
    public static let serverCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBvjCCAWWgAwIBAgIUcRwZnrAxJdKc0ldPUk7/RP9/DyAwCgYIKoZIzj0EAwIw
        GjEYMBYGA1UEAwwPQ291cmllciBUZXN0IENBMCAXDTI2MTEyMTA3MTMxM1oYDzIx
        MjYxMDI4MDcxMzEzWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIB
        BggqhkjOPQMBBwNCAAQ66b5B8nHEwq9/fFjQFOzjY+kN9q1L8bEycHa0rmNPO0F4
        hTkzOJQ40YbJZAJSPnamlOf5hnP73Tx541r/zn9vo4GMMIGJMBoGA1UdEQQTMBGC
        CWxvY2FsaG9zdIcEfwAAATAJBgNVHRMEAjAAMAsGA1UdDwQEAwIHgDATBgNVHSUE
        DDAKBggrBgEFBQcDATAdBgNVHQ4EFgQUeyfM6rjL2G94TlCa5jUihxYeGQEwHwYD
        VR0jBBgwFoAUoIgE7/EsSmEK2WnJkvd5+8wT8NwwCgYIKoZIzj0EAwIDRwAwRAIg
        Pu7iQ5/On5N1Z7B/u5zT5rdSZVsbOaeFiK30tRGBIUUCIFH9fFwbA9rqQXrOYsvr
        tnunMSHu+MjpHtLKq9x4pCvZ
        -----END CERTIFICATE-----
        """

    /// The server's private key (PEM). A test fixture: public.
    public static let serverKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgCJIKi2ZdtF9GXGUD
        M6EenFZNiaQBRTmLdvsk6rqKIWyhRANCAAQ66b5B8nHEwq9/fFjQFOzjY+kN9q1L
        8bEycHa0rmNPO0F4hTkzOJQ40YbJZAJSPnamlOf5hnP73Tx541r/zn9v
        -----END PRIVATE KEY-----
        """

    /// The SHA-256 of the server's public key, in libcurl's pinning form (`sha256//BASE64`).
    public static let serverPublicKeyPin = "sha256//RjGONrTSIIKbmCXMZVkAuHeLkGKEkQLvBvbUMKswM4Q="
}
