import HTTPTypes
import Testing

@testable import Courier

/// The one definition of a credential, and the keyed fingerprint the cache and de-duplication use.
@Suite("Credential scope")
struct CredentialScopeTests {
    @Test("SipHash-2-4 matches the reference vectors")
    func sipHashVectors() {
        let k0: UInt64 = 0x0706_0504_0302_0100
        let k1: UInt64 = 0x0F0E_0D0C_0B0A_0908
        #expect(SipHash24.hash([], k0: k0, k1: k1) == 0x726F_DB47_DD0E_0E31)
        #expect(SipHash24.hash(Array(0..<15), k0: k0, k1: k1) == 0xA129_CA61_49BE_45E5)
        #expect(SipHash24.hash(Array(0..<8), k0: k0, k1: k1) == 0x93F5_F579_9A93_2462)
    }

    @Test("credentials: the fixed names, the usual token names, and configured ones")
    func names() {
        for name in ["authorization", "proxy-authorization", "cookie", "x-api-key", "x-auth-token", "private-token"] {
            #expect(CredentialScope.isCredential(name, secretNames: []), "\(name)")
        }
        #expect(!CredentialScope.isCredential("x-tenant-secret", secretNames: []))
        #expect(CredentialScope.isCredential("x-tenant-secret", secretNames: ["x-tenant-secret"]))
        #expect(!CredentialScope.isCredential("accept", secretNames: ["x-tenant-secret"]))
        #expect(Redaction.isSensitiveHeader("X-Goog-Api-Key"))
        #expect(Redaction.isSensitiveHeader("Set-Cookie"))
    }

    @Test("the fingerprint depends on the credentials and the key, and never shows them")
    func fingerprints() {
        let key = FingerprintKey(1, 2, 3, 4)
        func print(_ pairs: [(String, String)], key: FingerprintKey = FingerprintKey(1, 2, 3, 4), secret: Set<String> = []) -> String? {
            CredentialScope.fingerprint(
                of: HTTPFields(pairs.map { HTTPField(name: HTTPField.Name($0.0)!, value: $0.1) }), secretNames: secret, key: key)
        }
        #expect(print([("Accept", "x")]) == nil)
        let alice = print([("X-Api-Key", "alice"), ("Accept", "x")])
        #expect(alice != nil)
        #expect(alice?.count == 32)
        #expect(alice == print([("x-api-key", "alice")]))
        #expect(alice != print([("X-Api-Key", "bob")]))
        #expect(alice != print([("X-Api-Key", "alice")], key: FingerprintKey(1, 2, 3, 5)))
        #expect(print([("Cookie", "a=1")]) != print([("Cookie", "a=2")]))
        #expect(print([("X-Tenant", "t1")], secret: ["x-tenant"]) != print([("X-Tenant", "t2")], secret: ["x-tenant"]))
        #expect(print([("X-Tenant", "t1")]) == nil)
        // Name and value are delimited: moving a byte from one to the other changes the print.
        #expect(print([("X-Api-Key", "ab")], key: key) != print([("X-Api-Key", "a"), ("Cookie", "b")], key: key))
        #expect(alice?.contains("alice") == false)
    }
}
