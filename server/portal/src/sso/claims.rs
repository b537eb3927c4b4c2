//! The account rules a provider's claims are judged by: which organisation the person belongs
//! to, and whether they may sign in (docs/identity.md, "Single sign-on").

use serde_json::{Map, Value};

use portal_identity::sso::{EMAIL_DOMAIN, OrganisationRule, Provider};

/// Why a person the provider vouched for is not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The provider has not verified the email the rules read.
    UnverifiedEmail,
    /// Their email's domain is not among the allowed ones.
    EmailDomain,
    /// The required claim does not hold the required value.
    NotInGroup,
    /// No organisation of theirs signs in with this provider.
    NoOrganisation,
}

/// The claims the provider sent: the ID token's, completed by userinfo's.
#[derive(Debug, Clone, Default)]
pub struct Claims(pub Map<String, Value>);

impl Claims {
    fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// The values of claim `name`: a string, or a list of strings.
    fn values(&self, name: &str) -> Vec<&str> {
        match self.0.get(name) {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether claim `name` is missing: userinfo is asked for it.
    pub fn lacks(&self, name: &str) -> bool {
        !self.0.contains_key(name)
    }

    /// Adds the claims of `more` that are missing here.
    pub fn complete(&mut self, more: Map<String, Value>) {
        for (name, value) in more {
            self.0.entry(name).or_insert(value);
        }
    }

    /// The domain of the email, lowercase, when the provider says it verified it.
    fn verified_email_domain(&self) -> Result<String, Refusal> {
        let email = self.text("email").ok_or(Refusal::UnverifiedEmail)?;
        let verified = match self.0.get("email_verified") {
            Some(Value::Bool(verified)) => *verified,
            Some(Value::String(text)) => text == "true",
            _ => false,
        };
        if !verified {
            return Err(Refusal::UnverifiedEmail);
        }
        email
            .rsplit_once('@')
            .map(|(_, domain)| domain.to_ascii_lowercase())
            .filter(|domain| !domain.is_empty())
            .ok_or(Refusal::UnverifiedEmail)
    }

    /// The name shown for the person.
    pub fn display_name(&self) -> Option<&str> {
        self.text("name")
            .or_else(|| self.text("preferred_username"))
            .or_else(|| self.text("email"))
            .map(str::trim)
            .filter(|n| !n.is_empty())
    }

    /// The words a new user id is made of: their username, or their email's local part.
    pub fn handle(&self) -> Option<&str> {
        self.text("preferred_username")
            .or_else(|| self.text("email").and_then(|e| e.split('@').next()))
    }
}

/// The claims the rules of `provider` read, so that userinfo is asked when the ID token lacks
/// them.
pub fn read_by(provider: &Provider) -> Vec<&str> {
    let mut names = Vec::new();
    if let OrganisationRule::ByClaim { claim, .. } = &provider.organisations {
        names.push(if claim == EMAIL_DOMAIN {
            "email"
        } else {
            claim
        });
    }
    if let Some((claim, _)) = &provider.rules.required {
        names.push(claim);
    }
    if !provider.rules.email_domains.is_empty() {
        names.push("email");
    }
    names.push("name");
    names
}

/// The organisation the person belongs to, if `provider`'s rules let them in.
pub fn admit(provider: &Provider, claims: &Claims) -> Result<String, Refusal> {
    let rules = &provider.rules;
    if !rules.email_domains.is_empty() {
        let domain = claims.verified_email_domain()?;
        if !rules.email_domains.contains(&domain) {
            return Err(Refusal::EmailDomain);
        }
    }
    if let Some((claim, value)) = &rules.required
        && !claims.values(claim).contains(&value.as_str())
    {
        return Err(Refusal::NotInGroup);
    }
    match &provider.organisations {
        OrganisationRule::One(one) => Ok(one.clone()),
        OrganisationRule::ByClaim { claim, values } => {
            let found = if claim == EMAIL_DOMAIN {
                vec![claims.verified_email_domain()?]
            } else {
                claims.values(claim).into_iter().map(String::from).collect()
            };
            found
                .iter()
                .find_map(|v| values.get(v))
                .cloned()
                .ok_or(Refusal::NoOrganisation)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use portal_identity::sso::{AccountRules, Secret};

    fn provider(organisations: OrganisationRule, rules: AccountRules) -> Provider {
        Provider {
            id: "idp".into(),
            label: "IdP".into(),
            issuer: "https://idp.example.com".into(),
            client_id: "portal".into(),
            client_secret: Secret("s".into()),
            scopes: Vec::new(),
            ca_certificate: None,
            organisations,
            rules,
        }
    }

    fn claims(value: Value) -> Claims {
        Claims(value.as_object().expect("an object").clone())
    }

    #[test]
    fn the_rules_admit_or_refuse() {
        let by_domain = OrganisationRule::ByClaim {
            claim: EMAIL_DOMAIN.into(),
            values: BTreeMap::from([
                ("acme.com".into(), "acme".into()),
                ("globex.com".into(), "globex".into()),
            ]),
        };
        let by_group = OrganisationRule::ByClaim {
            claim: "groups".into(),
            values: BTreeMap::from([("acme-staff".into(), "acme".into())]),
        };
        let one = OrganisationRule::One("acme".into());
        let group = AccountRules {
            required: Some(("groups".into(), "portal".into())),
            ..AccountRules::default()
        };
        let domains = AccountRules {
            email_domains: vec!["acme.com".into()],
            ..AccountRules::default()
        };
        let verified = json!({"email": "a@ACME.com", "email_verified": true});
        let unverified = json!({"email": "a@acme.com", "email_verified": false});
        let cases = [
            (&one, &AccountRules::default(), json!({}), Ok("acme")),
            (&one, &group, json!({"groups": ["x", "portal"]}), Ok("acme")),
            (&one, &group, json!({"groups": "portal"}), Ok("acme")),
            (
                &one,
                &group,
                json!({"groups": ["x"]}),
                Err(Refusal::NotInGroup),
            ),
            (&one, &group, json!({}), Err(Refusal::NotInGroup)),
            (&one, &domains, verified.clone(), Ok("acme")),
            (
                &one,
                &domains,
                unverified.clone(),
                Err(Refusal::UnverifiedEmail),
            ),
            (
                &one,
                &domains,
                json!({"email": "a@acme.com"}),
                Err(Refusal::UnverifiedEmail),
            ),
            (
                &one,
                &domains,
                json!({"email": "a@evil.com", "email_verified": true}),
                Err(Refusal::EmailDomain),
            ),
            (&by_domain, &AccountRules::default(), verified, Ok("acme")),
            (
                &by_domain,
                &AccountRules::default(),
                json!({"email": "g@globex.com", "email_verified": "true"}),
                Ok("globex"),
            ),
            (
                &by_domain,
                &AccountRules::default(),
                unverified,
                Err(Refusal::UnverifiedEmail),
            ),
            (
                &by_domain,
                &AccountRules::default(),
                json!({"email": "a@other.com", "email_verified": true}),
                Err(Refusal::NoOrganisation),
            ),
            (
                &by_group,
                &AccountRules::default(),
                json!({"groups": ["acme-staff"]}),
                Ok("acme"),
            ),
            (
                &by_group,
                &AccountRules::default(),
                json!({"groups": []}),
                Err(Refusal::NoOrganisation),
            ),
        ];
        for (organisations, rules, sent, expected) in cases {
            let provider = provider(organisations.clone(), rules.clone());
            assert_eq!(
                admit(&provider, &claims(sent.clone())),
                expected.map(String::from),
                "{sent}"
            );
        }
    }
}
