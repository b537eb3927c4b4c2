//! JavaScript objects read field by field, so that every refusal names the field it is about.

use serde::de::value::{MapAccessDeserializer, StrDeserializer};
use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess};
use serde_json::{Map, Value};
use wasm_bindgen::{JsCast, JsValue};

use super::{describe, input_error};

/// A plain JavaScript value in JSON's data model, read from its `JSON.stringify` text, or an
/// `InputError` naming `field` for one that has no JSON (a function, a BigInt, a cycle).
fn json_of(value: &JsValue, field: &str) -> Result<Value, JsValue> {
    let text = js_sys::JSON::stringify(value)
        .ok()
        .and_then(|text| text.as_string())
        .ok_or_else(|| {
            input_error(
                field,
                &format!(
                    "must be plain data that JSON can hold (no functions, BigInts or cycles), \
                     not {}",
                    describe(value)
                ),
            )
        })?;
    serde_json::from_str(&text).map_err(|e| input_error(field, &e.to_string()))
}

/// The fields of a JavaScript object in JSON's data model; a field set to `undefined` is absent.
/// An `InputError` naming `owner` when the value is not an object.
pub fn object_fields(value: &JsValue, owner: &str) -> Result<Map<String, Value>, JsValue> {
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(input_error(
            owner,
            &format!("must be an object, not {}", describe(value)),
        ));
    }
    let mut fields = Map::new();
    let object: &js_sys::Object = value.unchecked_ref();
    for key in js_sys::Object::keys(object).iter() {
        let name = key.as_string().unwrap_or_default();
        let field = js_sys::Reflect::get(value, &key).unwrap_or(JsValue::UNDEFINED);
        if !field.is_undefined() {
            let json = json_of(&field, &format!("{owner}.{name}"))?;
            fields.insert(name, json);
        }
    }
    Ok(fields)
}

/// A JavaScript object as `T`, one field at a time, so that a wrong value or an unknown field is
/// an `InputError` naming `owner.field`. `T`'s serde derive says which fields there are and what
/// they hold; a required field that is missing is a [`FieldError::Missing`] for the caller to
/// explain.
pub fn from_object<T: DeserializeOwned>(value: &JsValue, owner: &str) -> Result<T, FieldError> {
    let fields = object_fields(value, owner).map_err(FieldError::Js)?;
    T::deserialize(MapAccessDeserializer::new(Fields {
        owner,
        fields: fields.into_iter(),
        current: None,
    }))
}

/// Why [`from_object`] refused an object.
#[derive(Debug)]
pub enum FieldError {
    /// A required field is absent (or `undefined`).
    Missing(&'static str),
    /// The error to throw, naming the field.
    Js(JsValue),
    /// Not yet tied to a field: the whole object is to blame.
    Other(String),
}

impl FieldError {
    /// The error to throw, an `InputError` naming `owner.field` for a missing field.
    pub fn into_js(self, owner: &str) -> JsValue {
        match self {
            FieldError::Missing(field) => input_error(&format!("{owner}.{field}"), "missing"),
            FieldError::Js(error) => error,
            FieldError::Other(message) => input_error(owner, &message),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldError::Missing(field) => write!(f, "missing field `{field}`"),
            FieldError::Js(error) => write!(f, "{error:?}"),
            FieldError::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for FieldError {}

impl serde::de::Error for FieldError {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        FieldError::Other(message.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        FieldError::Missing(field)
    }
}

/// An object's fields handed to a serde derive one by one, each error tied to its field.
struct Fields<'a> {
    owner: &'a str,
    fields: serde_json::map::IntoIter,
    current: Option<(String, Value)>,
}

impl Fields<'_> {
    fn at(&self, field: &str, message: impl std::fmt::Display) -> FieldError {
        FieldError::Js(input_error(
            &format!("{}.{field}", self.owner),
            &message.to_string(),
        ))
    }
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = FieldError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, FieldError> {
        let Some((name, value)) = self.fields.next() else {
            return Ok(None);
        };
        let key = seed
            .deserialize(StrDeserializer::<FieldError>::new(&name))
            .map_err(|e| self.at(&name, e))?;
        self.current = Some((name, value));
        Ok(Some(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, FieldError> {
        let (name, value) = self
            .current
            .take()
            .ok_or_else(|| FieldError::Other("a value without its field".to_string()))?;
        seed.deserialize(value).map_err(|e| self.at(&name, e))
    }
}
