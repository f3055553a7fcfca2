import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority made up on start, and a server certificate for `localhost`, 127.0.0.1
/// and any other IPv4 address asked for, signed by it: clients trust the CA's PEM and talk TLS to
/// the fake as to the real thing, with nothing downloaded or committed.
package struct TestCertificateAuthority: Sendable {
    package let caCertificatePEM: String
    package let serverCertificatePEM: String
    package let serverKeyPEM: String

    /// `addresses`: IPv4 addresses the server is reached at besides 127.0.0.1 (a test host in a
    /// network namespace).
    package init(now: Date = Date(), addresses: [[UInt8]] = []) throws {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            CommonName("No-Hitter Alerts fake provider CA")
            OrganizationName("No-Hitter Alerts tests")
        }
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(caKey.publicKey), notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(30 * 86_400), issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }, issuerPrivateKey: Certificate.PrivateKey(caKey))

        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(serverKey.publicKey), notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(30 * 86_400), issuer: caName,
            subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(
                    [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]
                        + addresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) })
            }, issuerPrivateKey: Certificate.PrivateKey(caKey))

        caCertificatePEM = try ca.serializeAsPEM().pemString
        serverCertificatePEM = try server.serializeAsPEM().pemString
        serverKeyPEM = serverKey.pemRepresentation
    }
}
