//! [`Target`]: where a `--database postgres://…` URL connects and how, read from the URL in this
//! one place for the pool's connections and a replica's listening connection alike.
//!
//! tokio-postgres reads the URL itself, but knows only `sslmode=disable|prefer|require` and no
//! `sslrootcert`; those two are taken out here, and TLS is made with rustls (on ring, as reqwest
//! already uses), never OpenSSL:
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | none, `disable` | never (as before TLS was supported) | — |
//! | `prefer` | when the server offers it | not checked |
//! | `require` | always | not checked; with `sslrootcert`, signed by that authority (as libpq) |
//! | `verify-ca` | always | signed by the authority in `sslrootcert` |
//! | `verify-full` | always | signed by that authority, and for the host the URL names |
//!
//! **Decision:** `verify-ca` and `verify-full` need `sslrootcert` (a PEM file), where libpq would
//! fall back to `~/.postgresql/root.crt`: the authority a replica trusts is written where it is
//! used. `sslrootcert` with TLS off, or with `prefer`, which falls back to an unencrypted
//! connection, is refused: it would guard nothing.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use percent_encoding::percent_decode_str;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::config::SslMode as ClientSslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use portal_store::redacted;
use portal_store::{Result, StorageError};

/// How long connecting may take, TLS and sign-in included, before it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A URL's `sslmode`, as libpq names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        })
    }
}

/// A PostgreSQL database to connect to: tokio-postgres's configuration and the TLS it uses.
#[derive(Clone)]
pub struct Target {
    /// The URL's settings, `sslmode` and `sslrootcert` taken out, with the connect timeout and
    /// Portal's application name.
    pub config: tokio_postgres::Config,
    /// Makes each connection's TLS; unused when `mode` is `disable`.
    pub tls: MakeRustlsConnect,
    /// The TLS asked for; `require` with `sslrootcert` is `verify-ca`.
    pub mode: SslMode,
    /// The certificate authority the server's certificate must be signed by.
    pub root: Option<PathBuf>,
    /// The URL without its password, for messages.
    pub shown: String,
}

/// Shown without the password.
impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("url", &self.shown)
            .field("mode", &self.mode)
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// Reads `url` (`postgres://USER@HOST:PORT/DATABASE?sslmode=…&sslrootcert=…`), and the
    /// certificate authority file it names.
    pub fn parse(url: &str) -> Result<Target> {
        let shown = redacted(url);
        let setting = |problem: String| StorageError::PostgresTlsSetting {
            url: shown.clone(),
            problem,
        };
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut kept = Vec::new();
        let (mut mode, mut root) = (None, None);
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode_str(value).decode_utf8_lossy();
            match &*percent_decode_str(key).decode_utf8_lossy() {
                "sslmode" => {
                    mode = Some(SslMode::parse(&value).ok_or_else(|| {
                        setting(format!(
                            "sslmode={value} is not a mode Portal knows; write verify-full, verify-ca, require, prefer or disable"
                        ))
                    })?);
                }
                "sslrootcert" => root = Some(PathBuf::from(&*value)),
                _ => kept.push(pair),
            }
        }
        let asked = mode.unwrap_or(SslMode::Disable);
        let mode = match (asked, &root) {
            (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
                return Err(setting(format!(
                    "sslmode={asked} checks the server's certificate against a certificate authority, but the URL names none; add sslrootcert=PATH, the authority's certificate as a PEM file"
                )));
            }
            (SslMode::Disable | SslMode::Prefer, Some(_)) => {
                return Err(setting(format!(
                    "sslrootcert is given, but sslmode={asked} may connect without TLS, so the certificate authority would guard nothing; write sslmode=verify-full"
                )));
            }
            (SslMode::Require, Some(_)) => SslMode::VerifyCa,
            (asked, _) => asked,
        };
        let without_tls_settings = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        let mut config: tokio_postgres::Config =
            without_tls_settings
                .parse()
                .map_err(|source| StorageError::PostgresConnect {
                    url: shown.clone(),
                    source,
                })?;
        config.ssl_mode(match mode {
            SslMode::Disable => ClientSslMode::Disable,
            SslMode::Prefer => ClientSslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => ClientSslMode::Require,
        });
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("portal");
        let roots = root.as_deref().map(read_authority).transpose()?;
        let tls = MakeRustlsConnect::new(
            client_config(mode, roots)
                .map_err(|error| setting(format!("TLS cannot be set up ({error})")))?,
        );
        Ok(Target {
            config,
            tls,
            mode,
            root,
            shown,
        })
    }

    /// The host name the connection is made to, for messages.
    fn host(&self) -> String {
        match self.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
            #[cfg(unix)]
            Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
            None => "the default host".to_string(),
        }
    }

    /// Why a connection was refused, said with what to do: the certificate, TLS or the password
    /// when one of them is the cause, else that the database could not be reached.
    pub fn refused(&self, error: &postgres::Error) -> StorageError {
        let url = self.shown.clone();
        if let Some(db) = error.as_db_error() {
            use postgres::error::SqlState;
            if *db.code() == SqlState::INVALID_PASSWORD {
                return StorageError::PostgresPasswordRefused {
                    url,
                    user: self.config.get_user().unwrap_or_default().to_string(),
                };
            }
            if *db.code() == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                && self.mode == SslMode::Disable
                && db.message().contains("no encryption")
            {
                return StorageError::PostgresNeedsTls {
                    url,
                    detail: db.message().to_string(),
                };
            }
        }
        if let Some(tls) = rustls_error(error) {
            let ca = || {
                self.root
                    .as_deref()
                    .map_or_else(String::new, |p| p.display().to_string())
            };
            return match tls {
                rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                ) => StorageError::PostgresCertificateWrongHost {
                    url,
                    host: self.host(),
                    detail: tls.to_string(),
                },
                rustls::Error::InvalidCertificate(_) if self.root.is_some() => {
                    StorageError::PostgresCertificateUntrusted {
                        url,
                        ca: ca(),
                        detail: tls.to_string(),
                    }
                }
                _ => StorageError::PostgresTls {
                    url,
                    detail: tls.to_string(),
                },
            };
        }
        let detail = error.to_string();
        if detail.contains("server does not support TLS") {
            return StorageError::PostgresWithoutTls {
                url,
                mode: self.mode.to_string(),
            };
        }
        StorageError::PostgresUnreachable { url, detail }
    }
}

/// The rustls error behind a failed connection, if TLS failed. tokio-rustls hands it over inside
/// an `io::Error`, whose `source()` skips it, so each `io::Error` is opened too.
fn rustls_error(error: &postgres::Error) -> Option<&rustls::Error> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = next {
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(inner) = current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(inner);
        }
        next = current.source();
    }
    None
}

/// The certificates of the authority file `path` (PEM), as trust anchors.
fn read_authority(path: &Path) -> Result<RootCertStore> {
    let refused = |problem: String| StorageError::PostgresCaFile {
        path: path.to_path_buf(),
        problem,
    };
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|error| refused(pem_problem(error)))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|error| refused(pem_problem(error)))?;
    if certificates.is_empty() {
        return Err(refused(
            "it holds no certificate (no -----BEGIN CERTIFICATE----- block)".to_string(),
        ));
    }
    let mut roots = RootCertStore::empty();
    for certificate in certificates {
        roots
            .add(certificate)
            .map_err(|error| refused(format!("a certificate in it cannot be used ({error})")))?;
    }
    Ok(roots)
}

fn pem_problem(error: rustls::pki_types::pem::Error) -> String {
    match error {
        rustls::pki_types::pem::Error::Io(io) => format!("it cannot be read ({io})"),
        other => format!("it is not a PEM file ({other:?})"),
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The TLS a connection makes in `mode`, checking the server's certificate against `roots`.
fn client_config(
    mode: SslMode,
    roots: Option<RootCertStore>,
) -> std::result::Result<ClientConfig, rustls::Error> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()?;
    let roots = Arc::new(roots.unwrap_or_else(RootCertStore::empty));
    let config = match mode {
        SslMode::VerifyFull => builder.with_root_certificates(roots).with_no_client_auth(),
        SslMode::VerifyCa => {
            let full = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|error| rustls::Error::General(error.to_string()))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AuthorityOnly(full)))
                .with_no_client_auth()
        }
        SslMode::Disable | SslMode::Prefer | SslMode::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(
                provider.signature_verification_algorithms,
            )))
            .with_no_client_auth(),
    };
    Ok(config)
}

/// `verify-ca`: the certificate must be signed by the authority, for whatever name.
#[derive(Debug)]
struct AuthorityOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AuthorityOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        // The chain is checked before the name, so a wrong name means the chain was right.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `require` and `prefer`: encrypted, with any certificate (the handshake's signatures are still
/// checked, so the connection is with whoever holds that certificate's key).
#[derive(Debug)]
struct Unchecked(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(url: &str) -> String {
        Target::parse(url).expect_err(url).to_string()
    }

    #[test]
    fn sslmode_and_sslrootcert_are_read_here_and_the_rest_is_left_to_tokio_postgres() {
        let plain = Target::parse("postgres://portal:pw@db:5432/portal").expect("parses");
        assert_eq!(
            plain.mode,
            SslMode::Disable,
            "no sslmode keeps the plain connection"
        );
        assert_eq!(plain.config.get_ssl_mode(), ClientSslMode::Disable);
        assert_eq!(plain.config.get_user(), Some("portal"));
        assert_eq!(plain.config.get_password(), Some(&b"pw"[..]));
        assert_eq!(plain.shown, "postgres://portal:…@db:5432/portal");

        let required =
            Target::parse("postgres://portal@db/portal?options=-c%20x%3D1&sslmode=require")
                .expect("parses");
        assert_eq!(required.mode, SslMode::Require);
        assert_eq!(required.config.get_ssl_mode(), ClientSslMode::Require);
        assert_eq!(required.config.get_options(), Some("-c x=1"));

        let preferred = Target::parse("postgres://portal@db/portal?sslmode=prefer").expect("ok");
        assert_eq!(preferred.config.get_ssl_mode(), ClientSslMode::Prefer);
    }

    #[test]
    fn tls_settings_that_would_guard_nothing_are_refused_with_what_to_write() {
        for (url, expected) in [
            (
                "postgres://u@db/x?sslmode=verify-full",
                "sslmode=verify-full checks the server's certificate against a certificate authority, but the URL names none; add sslrootcert=PATH",
            ),
            (
                "postgres://u@db/x?sslmode=verify-ca",
                "add sslrootcert=PATH",
            ),
            (
                "postgres://u@db/x?sslrootcert=/etc/ca.pem",
                "sslrootcert is given, but sslmode=disable may connect without TLS",
            ),
            (
                "postgres://u@db/x?sslmode=prefer&sslrootcert=/etc/ca.pem",
                "sslmode=prefer may connect without TLS, so the certificate authority would guard nothing; write sslmode=verify-full",
            ),
            (
                "postgres://u@db/x?sslmode=verify_full",
                "sslmode=verify_full is not a mode Portal knows; write verify-full, verify-ca, require, prefer or disable",
            ),
        ] {
            let refused = refusal(url);
            assert!(refused.contains(expected), "{url}: {refused}");
            assert!(
                refused.contains("postgres://u@db/x"),
                "names the URL: {refused}"
            );
        }
    }

    #[test]
    fn an_authority_file_that_is_missing_or_holds_no_certificate_is_refused_naming_it() {
        let dir = tempfile::tempdir().expect("a folder");
        let missing = dir.path().join("missing.pem");
        let refused = refusal(&format!(
            "postgres://u@db/x?sslmode=verify-full&sslrootcert={}",
            missing.display()
        ));
        assert!(
            refused.contains(&format!(
                "cannot use {} as the certificate authority of the PostgreSQL server (sslrootcert): it cannot be read",
                missing.display()
            )),
            "{refused}"
        );
        assert!(
            refused.contains("give sslrootcert the PEM file"),
            "{refused}"
        );

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").expect("written");
        let refused = refusal(&format!(
            "postgres://u@db/x?sslmode=verify-full&sslrootcert={}",
            empty.display()
        ));
        assert!(refused.contains("it holds no certificate"), "{refused}");
    }

    #[test]
    fn require_with_an_authority_checks_it_as_libpq_does() {
        let dir = tempfile::tempdir().expect("a folder");
        let ca = rcgen::generate_simple_self_signed(vec!["ca.example".to_string()])
            .expect("a certificate");
        let path = dir.path().join("ca pem.pem");
        std::fs::write(&path, ca.cert.pem()).expect("written");
        let encoded = path.display().to_string().replace(' ', "%20");
        let target = Target::parse(&format!(
            "postgres://u@db/x?sslmode=require&sslrootcert={encoded}"
        ))
        .expect("parses");
        assert_eq!(target.mode, SslMode::VerifyCa);
        assert_eq!(target.root.as_deref(), Some(path.as_path()));
        assert_eq!(target.config.get_ssl_mode(), ClientSslMode::Require);
    }
}
