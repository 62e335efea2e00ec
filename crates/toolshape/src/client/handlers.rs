//! What a client answers when the server asks: the user (elicitation), the
//! model (sampling), the roots. Each is declared as a capability only when
//! a handler is set; the same handlers answer server-to-client requests
//! (handshake revisions) and the `inputRequests` of a 2026-07-28
//! `input_required` result.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use toolshape_protocol::asks::{
    Ask, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult,
    Root,
};
use toolshape_protocol::{ClientCapabilities, ErrorObject};

type Answer<T> = Pin<Box<dyn Future<Output = Result<T, ErrorObject>> + Send>>;
type Handler<P, R> = Arc<dyn Fn(P) -> Answer<R> + Send + Sync>;

/// The client's answers to the server's questions.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    elicit: Option<Handler<ElicitParams, ElicitResult>>,
    /// Whether the elicitation handler takes URL mode too.
    elicit_url: bool,
    sample: Option<Handler<CreateMessageParams, CreateMessageResult>>,
    roots: Option<Handler<(), Vec<Root>>>,
    /// Whether the roots come from a handler, and so may change (fixed
    /// ones, `ClientBuilder::roots`, do not).
    roots_may_change: bool,
    /// Whether changes of a handler's roots go untold
    /// (`ClientBuilder::unannounced_roots_changes`).
    roots_changes_untold: bool,
    /// Whether `roots` answers also about calls whose questions are relayed
    /// (`ClientBuilder::keep_roots`).
    keep_roots: bool,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("elicit", &self.elicit.is_some())
            .field("elicit_url", &self.elicit_url)
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots.is_some())
            .field("keep_roots", &self.keep_roots)
            .finish()
    }
}

impl Handlers {
    pub(crate) fn set_elicit<F, Fut>(&mut self, url_mode: bool, handler: F)
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |params| Box::pin(handler(params))));
        self.elicit_url = url_mode;
    }

    pub(crate) fn set_sample<F, Fut>(&mut self, handler: F)
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |params| Box::pin(handler(params))));
    }

    pub(crate) fn set_roots_with<F, Fut>(&mut self, handler: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move |()| Box::pin(handler())));
        self.roots_may_change = true;
    }

    pub(crate) fn set_roots(&mut self, roots: Vec<Root>) {
        self.set_roots_with(move || {
            let roots = roots.clone();
            async move { Ok(roots) }
        });
        self.roots_may_change = false;
    }

    pub(crate) fn keep_roots(&mut self) {
        self.keep_roots = true;
    }

    pub(crate) fn tell_no_roots_changes(&mut self) {
        self.roots_changes_untold = true;
    }

    /// Whether these handlers answer `ask` even about a call whose
    /// questions are relayed: the roots, once kept.
    pub(crate) fn answer_relayed(&self, ask: &Ask) -> bool {
        self.keeps_roots() && matches!(ask, Ask::Roots)
    }

    /// Whether a call whose questions are relayed declares these handlers'
    /// roots rather than its caller's.
    pub(crate) fn keeps_roots(&self) -> bool {
        self.keep_roots && self.roots.is_some()
    }

    /// The capabilities these handlers make good.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.elicit.is_some() {
            let mut modes = Map::new();
            modes.insert("form".into(), Value::Object(Map::new()));
            if self.elicit_url {
                modes.insert("url".into(), Value::Object(Map::new()));
            }
            capabilities.elicitation = Some(modes);
        }
        if self.sample.is_some() {
            capabilities.sampling = Some(Map::new());
        }
        if self.roots.is_some() {
            capabilities.roots = Some(Default::default());
        }
        capabilities
    }

    /// Whether the handshake declares roots that may change (`listChanged`).
    pub(crate) fn announces_roots_changes(&self) -> bool {
        self.roots.is_some() && self.roots_may_change && !self.roots_changes_untold
    }

    /// The capabilities declared in a handshake (`initialize`): these, with
    /// roots from a handler declared as changing (`listChanged`, which
    /// 2026-07-28 dropped; the client tells of a change with
    /// `Client::notify_roots_changed`).
    pub(crate) fn handshake_capabilities(&self) -> ClientCapabilities {
        let mut capabilities = self.capabilities();
        if let Some(roots) = capabilities
            .roots
            .as_mut()
            .filter(|_| self.announces_roots_changes())
        {
            roots.list_changed = Some(true);
        }
        capabilities
    }

    /// The answer to one question, as the result JSON.
    pub(crate) async fn answer(&self, ask: Ask) -> Result<Value, ErrorObject> {
        let missing = |what: &str| {
            ErrorObject::method_not_found(&format!("{what} (this client does not offer it)"))
        };
        let value = match ask {
            Ask::Elicit(params) => {
                let handler = self
                    .elicit
                    .as_ref()
                    .ok_or_else(|| missing("elicitation/create"))?;
                serde_json::to_value(handler(params).await?)
            }
            Ask::Sample(params) => {
                let handler = self
                    .sample
                    .as_ref()
                    .ok_or_else(|| missing("sampling/createMessage"))?;
                serde_json::to_value(handler(params).await?)
            }
            Ask::Roots => {
                let handler = self.roots.as_ref().ok_or_else(|| missing("roots/list"))?;
                serde_json::to_value(ListRootsResult::new(handler(()).await?))
            }
            _ => return Err(missing("this request")),
        };
        value.map_err(|e| ErrorObject::internal_error(e.to_string()))
    }
}
