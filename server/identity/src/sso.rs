//! Reading the single sign-on providers of a configuration directory: `providers/<id>.toml`
//! (docs/identity.md, "Single sign-on").

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ConfigError;
use crate::files::{read_toml, toml_files};

/// The claim [`OrganisationRule::ByClaim`] reads the domain of the verified email from.
pub const EMAIL_DOMAIN: &str = "email_domain";

/// An OpenID Connect provider people sign in with.
#[derive(Debug, Clone)]
pub struct Provider {
    /// Its file's name: the id in the portal's sign-in addresses.
    pub id: String,
    /// Its name as people know it: the button says "Sign in with" it, and the pages about a
    /// sign-in name it.
    pub label: String,
    /// The issuer discovery starts from, and every ID token must name.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Secret,
    /// The scopes asked for besides `openid`.
    pub scopes: Vec<String>,
    /// A PEM certificate trusted besides the usual roots, for a provider whose certificate a
    /// private authority signed.
    pub ca_certificate: Option<Vec<u8>>,
    pub organisations: OrganisationRule,
    pub rules: AccountRules,
}

/// The organisation a person who signs in with a provider belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrganisationRule {
    /// Always the same one.
    One(String),
    /// The organisation a claim's value names: `email_domain` (of a verified email) or any claim
    /// of the ID token or userinfo, a string or a list of strings.
    ByClaim {
        claim: String,
        values: BTreeMap<String, String>,
    },
}

impl OrganisationRule {
    /// Whether people of organisation `id` may sign in with the provider.
    pub fn serves(&self, id: &str) -> bool {
        match self {
            OrganisationRule::One(one) => one == id,
            OrganisationRule::ByClaim { values, .. } => values.values().any(|v| v == id),
        }
    }
}

/// Who may sign in with a provider, and whether a first sign-in makes an account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountRules {
    /// A first sign-in makes the person's account; otherwise only existing accounts sign in.
    pub sign_up: bool,
    /// A claim that must hold this value (or list it) at every sign-in: a group or a role.
    pub required: Option<(String, String)>,
    /// The domains a verified email must have, at every sign-in; any when empty.
    pub email_domains: Vec<String>,
}

/// A client secret, which no log or error message prints.
#[derive(Clone)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderFile {
    label: String,
    issuer: String,
    client_id: String,
    #[serde(default)]
    client_secret_env: Option<String>,
    #[serde(default)]
    client_secret_file: Option<PathBuf>,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    ca_certificate: Option<PathBuf>,
    #[serde(default)]
    organisation: Option<String>,
    #[serde(default)]
    organisation_claim: Option<String>,
    #[serde(default)]
    organisations: BTreeMap<String, String>,
    #[serde(default)]
    sign_up: bool,
    #[serde(default)]
    required_claim: Option<String>,
    #[serde(default)]
    required_value: Option<String>,
    #[serde(default)]
    email_domains: Vec<String>,
}

/// The providers of the configuration directory `root`, by id; none without a `providers`
/// folder. Every organisation they name must be one of `organisations` (ids).
pub fn load<'a>(
    root: &Path,
    organisations: impl IntoIterator<Item = &'a String>,
) -> Result<Vec<Provider>, ConfigError> {
    let organisations: BTreeSet<&str> = organisations.into_iter().map(String::as_str).collect();
    let dir = root.join("providers");
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    toml_files(&dir)?
        .into_iter()
        .map(|(id, path)| provider(root, id, &path, &organisations))
        .collect()
}

fn provider(
    root: &Path,
    id: String,
    path: &Path,
    organisations: &BTreeSet<&str>,
) -> Result<Provider, ConfigError> {
    let file: ProviderFile = read_toml(path)?;
    let field = |field: &'static str, problem: String| ConfigError::Field {
        path: path.to_path_buf(),
        field,
        problem,
    };
    check_issuer(&file.issuer).map_err(|problem| field("issuer", problem))?;
    let client_secret = match (&file.client_secret_env, &file.client_secret_file) {
        (Some(name), None) => std::env::var(name).map_err(|_| {
            field(
                "client_secret_env",
                format!("names `{name}`, which is not set; set it to the client secret"),
            )
        })?,
        (None, Some(file)) => std::fs::read_to_string(root.join(file))
            .map_err(|e| {
                field(
                    "client_secret_file",
                    format!("`{}` cannot be read ({e}); check the path", file.display()),
                )
            })?
            .trim()
            .to_string(),
        _ => {
            return Err(field(
                "client_secret_env",
                "must be given, or `client_secret_file`, not both: the secret is never written in this file".into(),
            ));
        }
    };
    let ca_certificate = file
        .ca_certificate
        .map(|ca| {
            let bytes = std::fs::read(root.join(&ca)).map_err(|e| {
                field(
                    "ca_certificate",
                    format!("`{}` cannot be read ({e}); check the path", ca.display()),
                )
            })?;
            reqwest::Certificate::from_pem(&bytes).map_err(|e| {
                field(
                    "ca_certificate",
                    format!("`{}` is not a PEM certificate ({e})", ca.display()),
                )
            })?;
            Ok(bytes)
        })
        .transpose()?;
    let organisations_rule = match (file.organisation, file.organisation_claim) {
        (Some(one), None) if file.organisations.is_empty() => OrganisationRule::One(one),
        (None, Some(claim)) if !file.organisations.is_empty() => OrganisationRule::ByClaim {
            claim,
            values: file.organisations,
        },
        _ => {
            return Err(field(
                "organisation",
                "must name one organisation, or `organisation_claim` must name a claim with `organisations` mapping its values to organisations".into(),
            ));
        }
    };
    let named: Vec<&String> = match &organisations_rule {
        OrganisationRule::One(one) => vec![one],
        OrganisationRule::ByClaim { values, .. } => values.values().collect(),
    };
    if let Some(unknown) = named.iter().find(|o| !organisations.contains(o.as_str())) {
        return Err(field(
            "organisation",
            format!("names `{unknown}`, which is not an organisation of this directory"),
        ));
    }
    let required = match (file.required_claim, file.required_value) {
        (Some(claim), Some(value)) => Some((claim, value)),
        (None, None) => None,
        _ => {
            return Err(field(
                "required_claim",
                "and `required_value` go together: the claim, and the value it must hold".into(),
            ));
        }
    };
    Ok(Provider {
        id,
        label: file.label,
        issuer: file.issuer.trim_end_matches('/').to_string(),
        client_id: file.client_id,
        client_secret: Secret(client_secret),
        scopes: file.scopes,
        ca_certificate,
        organisations: organisations_rule,
        rules: AccountRules {
            sign_up: file.sign_up,
            required,
            email_domains: file
                .email_domains
                .into_iter()
                .map(|d| d.to_ascii_lowercase())
                .collect(),
        },
    })
}

/// An issuer is `https`, or `http` on a loopback address (a provider on the same machine).
fn check_issuer(issuer: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(issuer).map_err(|e| {
        format!("`{issuer}` is not an address ({e}); write https://idp.example.com")
    })?;
    let host = url.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "`{issuer}` is not https; a provider is reached over https (plain http only on this machine)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuers() {
        for good in [
            "https://idp.example.com",
            "https://login.microsoftonline.com/tenant/v2.0",
            "http://127.0.0.1:9000",
            "http://localhost:9000/realms/acme",
        ] {
            assert_eq!(check_issuer(good), Ok(()), "{good}");
        }
        for bad in ["http://idp.example.com", "idp.example.com", "ftp://idp"] {
            assert!(check_issuer(bad).is_err(), "{bad}");
        }
    }

    fn organisations() -> BTreeSet<&'static str> {
        BTreeSet::from(["acme"])
    }

    #[test]
    fn provider_files_are_read_or_refused_naming_the_field() {
        let base =
            "label = \"Acme ID\"\nissuer = \"https://idp.example.com\"\nclient_id = \"portal\"\n";
        let secret = "client_secret_file = \"secret\"\n";
        let cases: [(String, Result<(), &str>); 8] = [
            (format!("{base}{secret}organisation = \"acme\"\n"), Ok(())),
            (
                format!(
                    "{base}{secret}organisation_claim = \"email_domain\"\norganisations = {{ \"acme.com\" = \"acme\" }}\n"
                ),
                Ok(()),
            ),
            (
                format!("{base}organisation = \"acme\"\n"),
                Err("client_secret_env"),
            ),
            (
                format!("{base}{secret}client_secret_env = \"X\"\norganisation = \"acme\"\n"),
                Err("client_secret_env"),
            ),
            (
                format!("{base}client_secret = \"inline\"\norganisation = \"acme\"\n"),
                Err("unknown field"),
            ),
            (
                format!("{base}{secret}organisation = \"globex\"\n"),
                Err("globex"),
            ),
            (format!("{base}{secret}"), Err("organisation")),
            (
                format!("{base}{secret}organisation = \"acme\"\nrequired_claim = \"groups\"\n"),
                Err("required_claim"),
            ),
        ];
        let organisations = organisations();
        for (text, expected) in cases {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::write(dir.path().join("secret"), "s3cret\n").expect("secret");
            std::fs::write(dir.path().join("idp.toml"), &text).expect("provider");
            let read = provider(
                dir.path(),
                "idp".into(),
                &dir.path().join("idp.toml"),
                &organisations,
            );
            match (read, expected) {
                (Ok(provider), Ok(())) => assert_eq!(provider.client_secret.0, "s3cret"),
                (Err(error), Err(words)) => {
                    assert!(error.to_string().contains(words), "{text}: {error}")
                }
                (read, expected) => panic!("{text}: {read:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn the_secret_is_never_printed() {
        assert_eq!(format!("{:?}", Secret("s3cret".into())), "Secret(…)");
    }
}
