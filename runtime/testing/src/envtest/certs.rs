//! The certificates of a test control plane: one CA signs the API server's serving
//! certificate, the webhook server's, and the client certificates users authenticate with, as
//! envtest's own small CA does.

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

/// A certificate and its key, PEM-encoded.
pub(crate) struct Pem {
    pub(crate) cert: String,
    pub(crate) key: String,
}

/// The CA of a control plane.
pub(crate) struct Ca {
    issuer: Issuer<'static, KeyPair>,
    /// The CA's certificate, PEM-encoded: what clients and the API server trust.
    pub(crate) cert: String,
}

impl Ca {
    pub(crate) fn new() -> Result<Self, rcgen::Error> {
        let mut params = CertificateParams::default();
        params.distinguished_name = name("rbuilder-envtest-ca", None);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate()?;
        let cert = params.self_signed(&key)?.pem();
        Ok(Self {
            issuer: Issuer::new(params, key),
            cert,
        })
    }

    /// A serving certificate for `127.0.0.1` and `localhost`.
    pub(crate) fn server(&self, common_name: &str) -> Result<Pem, rcgen::Error> {
        let mut params = CertificateParams::new(["127.0.0.1".to_owned(), "localhost".to_owned()])?;
        params.distinguished_name = name(common_name, None);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(params)
    }

    /// A client certificate for `user` in `group`, as the API server reads them: the common
    /// name is the user, the organization the group.
    pub(crate) fn client(&self, user: &str, group: &str) -> Result<Pem, rcgen::Error> {
        let mut params = CertificateParams::default();
        params.distinguished_name = name(user, Some(group));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }

    fn sign(&self, params: CertificateParams) -> Result<Pem, rcgen::Error> {
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(Pem {
            cert: cert.pem(),
            key: key.serialize_pem(),
        })
    }
}

/// A key of its own (ECDSA P-256, PKCS#8 PEM), e.g. to sign ServiceAccount tokens with.
pub(crate) fn key() -> Result<String, rcgen::Error> {
    Ok(KeyPair::generate()?.serialize_pem())
}

/// The public half of a key made by [`key`], PEM-encoded.
pub(crate) fn public_key(private_pem: &str) -> Result<String, rcgen::Error> {
    Ok(KeyPair::from_pem(private_pem)?.public_key_pem())
}

fn name(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    if let Some(organization) = organization {
        name.push(DnType::OrganizationName, organization);
    }
    name
}
