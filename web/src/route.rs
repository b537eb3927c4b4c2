//! The page's address: `/` is a new chat, `/c/<id>` a conversation, `/s/<token>` a shared
//! conversation's page. Moving between a new chat and the conversations changes the address with
//! the History API, without reloading; Back and Forward arrive as `popstate`.

/// What the address names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    NewChat,
    Conversation(String),
    /// A shared conversation, by its link's token (web/src/shared_page.rs).
    Shared(String),
}

impl Route {
    /// The route the page's address names. An old `#c1` address is taken as `/c/c1` and the
    /// address rewritten, so links made before conversations had their own paths still open.
    pub fn current() -> Route {
        let Some(location) = web_sys::window().map(|w| w.location()) else {
            return Route::NewChat;
        };
        let hash = location.hash().unwrap_or_default();
        let old = hash.trim_start_matches('#');
        if !old.is_empty() {
            let route = Route::Conversation(old.to_string());
            route.replace();
            return route;
        }
        let path = location.pathname().unwrap_or_default();
        // The rest of the path after `prefix`, decoded, when it is one segment.
        let named = |prefix: &str| {
            path.strip_prefix(prefix)
                .filter(|rest| !rest.is_empty() && !rest.contains('/'))
                .map(|rest| {
                    js_sys::decode_uri_component(rest)
                        .map(String::from)
                        .unwrap_or_else(|_| rest.to_string())
                })
        };
        if let Some(id) = named("/c/") {
            return Route::Conversation(id);
        }
        if let Some(token) = named("/s/") {
            return Route::Shared(token);
        }
        // Any other path shows a new chat, and says so.
        if path != "/" {
            Route::NewChat.replace();
        }
        Route::NewChat
    }

    /// The conversation the route names.
    pub fn conversation(&self) -> Option<&str> {
        match self {
            Route::Conversation(id) => Some(id),
            Route::NewChat | Route::Shared(_) => None,
        }
    }

    /// The address of the route.
    pub fn path(&self) -> String {
        match self {
            Route::NewChat => "/".to_string(),
            Route::Conversation(id) => format!("/c/{}", js_sys::encode_uri_component(id)),
            Route::Shared(token) => format!("/s/{}", js_sys::encode_uri_component(token)),
        }
    }

    /// Adds the route to the tab's history, unless the page is already there.
    pub fn push(&self) {
        if let Some(history) = self.history_if_elsewhere() {
            let _ =
                history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&self.path()));
        }
    }

    /// Puts the route in place of the address the tab's history holds now.
    pub fn replace(&self) {
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.replace_state_with_url(
                &wasm_bindgen::JsValue::NULL,
                "",
                Some(&self.path()),
            );
        }
    }

    fn history_if_elsewhere(&self) -> Option<web_sys::History> {
        let window = web_sys::window()?;
        let here = window.location().pathname().ok()?;
        let there = self.path();
        (here != there || !window.location().hash().ok()?.is_empty())
            .then(|| window.history().ok())
            .flatten()
    }
}
