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

    // Mutual TLS (``TestServer/Mode/mutualTLS``): a second private CA that signs client
    // certificates, and one client certificate (`CN=courier-test-client`,
    // `extendedKeyUsage=clientAuth`, P-256, valid until 2126) with its key, plain and encrypted.

    /// The CA the mutual-TLS server trusts for client certificates (PEM).
    public static let clientCAPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBqTCCAU+gAwIBAgIUJiRJrnvT6wsQKx8OE+3l1kKFXDkwCgYIKoZIzj0EAwIw
        ITEfMB0GA1UEAwwWQ291cmllciBUZXN0IENsaWVudCBDQTAgFw0yNjExMjExNjU4
        MzJaGA8yMTI2MTAyODE2NTgzMlowITEfMB0GA1UEAwwWQ291cmllciBUZXN0IENs
        aWVudCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABBlYDKMHL4w2EYqGJNcZ
        urPGJG5QdqcHTJ8k5XeO93XCPXk5RB9je84SUxdtUqEWx/BX2jIXWLpGv0NH6N2C
        3kGjYzBhMB0GA1UdDgQWBBQj8/s32PL/AElTs2fv2Xp9VzPHXDAfBgNVHSMEGDAW
        gBQj8/s32PL/AElTs2fv2Xp9VzPHXDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB
        /wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiEAl/GhkC8FpOHtuHqvjfGL/YxrtCPd
        PT3uqGKJzVULnvUCID2tfSYDGHyCLUrwsr3ieC36kTDLzaBX3vW+Rfl5MJly
        -----END CERTIFICATE-----
        """

    /// The client's certificate (PEM), signed by ``clientCAPEM``.
    public static let clientCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBtDCCAVugAwIBAgIUZ1CA1Y+b72ixIlARiOGBq4D3XbMwCgYIKoZIzj0EAwIw
        ITEfMB0GA1UEAwwWQ291cmllciBUZXN0IENsaWVudCBDQTAgFw0yNjExMjExNjU4
        MzJaGA8yMTI2MTAyODE2NTgzMlowHjEcMBoGA1UEAwwTY291cmllci10ZXN0LWNs
        aWVudDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABGzzsDq6M9vSZK0mpXauUwRg
        t+0hIwwhjK1KrJk9XSdP2KejrL4gp08aMXUhWNld/wMQhl+gTkQ2Cc3R+tC1lvmj
        cjBwMAkGA1UdEwQCMAAwDgYDVR0PAQH/BAQDAgeAMBMGA1UdJQQMMAoGCCsGAQUF
        BwMCMB0GA1UdDgQWBBToZf7g09/CsO3kAidYabTIc0YLIDAfBgNVHSMEGDAWgBQj
        8/s32PL/AElTs2fv2Xp9VzPHXDAKBggqhkjOPQQDAgNHADBEAiAS1OG6kdAbxLPN
        p1kuVdEPHYkVWf0w9Lf8L9JDFloKdwIgUTjG7ROjTm/xjhbHdJt+k4ByGqoF8GWu
        5bpLv2LhRbY=
        -----END CERTIFICATE-----
        """

    /// The client's private key (PKCS#8 PEM). A test fixture: public.
    public static let clientKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgRq6Z2+h3Tz85e7bV
        a5bU/0WokKeYDnwAVU9sra5O8x2hRANCAARs87A6ujPb0mStJqV2rlMEYLftISMM
        IYytSqyZPV0nT9ino6y+IKdPGjF1IVjZXf8DEIZfoE5ENgnN0frQtZb5
        -----END PRIVATE KEY-----
        """

    /// The same key encrypted with ``clientKeyPassword`` (PKCS#8, AES-256-CBC).
    public static let clientEncryptedKeyPEM = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAgQRSwpCaffQAICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEPSIhCbHonAP5sImoKisIigEgZBS
        KIaSsy6Ycd2+A23whhqcLE/wDFkUtnJhDkxZofGrfPAQTGMFIgklQe9AQJWu60Z6
        7/CVaqYDYRKJGFj6CWB8FIRgjapm7UPCl7PWLl9F8VxzX/Paw+b5a7vgFzo2HGnz
        3ornd3hnN9cd24dW6wXaWqpYstvNBRZfD3tPjHTAwz9br2TSiE07GDmJ7zWoZVA=
        -----END ENCRYPTED PRIVATE KEY-----
        """

    /// The password of ``clientEncryptedKeyPEM``.
    public static let clientKeyPassword = "courier-test"
}
