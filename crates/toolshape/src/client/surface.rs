//! The rest of a server's surface, from the client: resources (listed to
//! the end of their pages, read, subscribed to), prompts (listed, got) and
//! completions. Reads and prompts go through input_required rounds like
//! tool calls.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use toolshape_protocol::completion::{Completion, CompletionRef};
use toolshape_protocol::content::ResourceContents;
use toolshape_protocol::lists::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
};
use toolshape_protocol::prompts::{GetPromptParams, GetPromptResult, Prompt};
use toolshape_protocol::resources::{
    ReadResourceParams, ReadResourceResult, Resource, ResourceTemplate,
};
use toolshape_protocol::{LoggingLevel, methods};

use super::Client;
use super::error::ClientError;
use super::pages::{MAX_ITEMS, MAX_LISTING_BYTES, Pages};
use crate::tool::ToolContext;

impl Client {
    async fn simple<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: &P,
    ) -> Result<R, ClientError> {
        let peer = &self.inner.peer;
        let raw = peer
            .request(
                peer.next_id(),
                method,
                params,
                self.route(),
                self.inner.options.request_timeout,
                true,
            )
            .await?;
        raw.parse(method)
    }

    /// Whether the server still answers, within `timeout`: `ping` on the
    /// handshake revisions, `server/discover` on 2026-07-28 (which has no
    /// `ping`). For telling a server that stopped reading from one whose
    /// tool is slow (`toolshape check` after a call timed out).
    pub async fn ping(&self, timeout: Duration) -> Result<(), ClientError> {
        let method = if self.protocol_version().is_stateless() {
            methods::SERVER_DISCOVER
        } else {
            methods::PING
        };
        let peer = &self.inner.peer;
        peer.request(
            peer.next_id(),
            method,
            &self.params(Map::new()),
            self.route(),
            timeout,
            true,
        )
        .await?;
        Ok(())
    }

    /// Asks the server for its log messages at `level` and above
    /// (`logging/setLevel`, on the handshake revisions; the server should
    /// declare the `logging` capability). Messages about a call made with
    /// [`CallOptions::log`](crate::tool::CallOptions::log) go to that call;
    /// the others are logged through `tracing` (target
    /// `toolshape::server_log`). On 2026-07-28 there is no such request: each
    /// call asks for its own messages, and this does nothing.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.protocol_version().is_stateless() {
            return Ok(());
        }
        let _: Value = self
            .simple(methods::LOGGING_SET_LEVEL, &json!({"level": level}))
            .await?;
        Ok(())
    }

    pub(super) fn params(&self, mut params: Map<String, Value>) -> Map<String, Value> {
        if let Some(meta) = self.request_meta() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        params
    }

    /// Follows a paginated list to its end, within [`Pages`]' bounds.
    async fn all_pages<R, T>(
        &self,
        method: &'static str,
        take: impl Fn(R) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, ClientError>
    where
        R: DeserializeOwned,
    {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = Pages::new(
            method,
            MAX_ITEMS,
            MAX_LISTING_BYTES.max(self.inner.options.max_message_bytes),
        );
        loop {
            let mut params = Map::new();
            if let Some(cursor) = &cursor {
                params.insert("cursor".into(), json!(cursor));
            }
            let peer = &self.inner.peer;
            let raw = peer
                .request(
                    peer.next_id(),
                    method,
                    &self.params(params),
                    self.route(),
                    self.inner.options.request_timeout,
                    true,
                )
                .await?;
            pages.received(raw.text().len())?;
            let (items, next) = take(raw.parse(method)?);
            pages.listed(items.len())?;
            all.extend(items);
            cursor = pages.next(next)?;
            if cursor.is_none() {
                return Ok(all);
            }
        }
    }

    /// Every resource the server lists.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.all_pages(methods::RESOURCES_LIST, |page: ListResourcesResult| {
            (page.resources, page.next_cursor)
        })
        .await
    }

    /// Every resource template the server lists.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.all_pages(
            methods::RESOURCES_TEMPLATES_LIST,
            |page: ListResourceTemplatesResult| (page.resource_templates, page.next_cursor),
        )
        .await
    }

    /// Reads the resource at `uri` (answering the server's questions, if it asks).
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, ClientError> {
        self.read_resource_with(uri, None).await
    }

    /// Reads the resource at `uri` for the client of `context` (a gateway's
    /// read): the server's questions about it are asked of that client, as
    /// for a call with [`CallOptions::relay_asks`](crate::CallOptions::relay_asks).
    pub async fn read_resource_asking(
        &self,
        uri: &str,
        context: ToolContext,
    ) -> Result<Vec<ResourceContents>, ClientError> {
        self.read_resource_with(uri, Some(context)).await
    }

    async fn read_resource_with(
        &self,
        uri: &str,
        asking: Option<ToolContext>,
    ) -> Result<Vec<ResourceContents>, ClientError> {
        let mut route = self.route();
        // 2026-07-28: `Mcp-Name` names the resource read.
        route.name = Some(uri.to_owned());
        let mut params = ReadResourceParams::new(uri);
        params.meta = match asking {
            Some(context) => self.relaying(&mut route, context),
            None => self.request_meta(),
        };
        let raw = self
            .request_in_rounds(
                methods::RESOURCES_READ,
                &route,
                self.inner.options.request_timeout,
                &mut params,
            )
            .await?;
        let result: ReadResourceResult = raw.parse(methods::RESOURCES_READ)?;
        Ok(result.contents)
    }

    /// Subscribes to changes of the resource at `uri` (handshake revisions;
    /// on 2026-07-28, [`Client::listen`]); its updates reach
    /// [`Client::resource_updates`].
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.about_resource(methods::RESOURCES_SUBSCRIBE, uri).await
    }

    /// Ends the subscription to the resource at `uri` (handshake revisions).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.about_resource(methods::RESOURCES_UNSUBSCRIBE, uri)
            .await
    }

    /// `method` with `{"uri": uri}`, its empty result dropped.
    async fn about_resource(&self, method: &'static str, uri: &str) -> Result<(), ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), json!(uri));
        let _: Value = self.simple(method, &self.params(params)).await?;
        Ok(())
    }

    /// Every prompt the server lists.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.all_pages(methods::PROMPTS_LIST, |page: ListPromptsResult| {
            (page.prompts, page.next_cursor)
        })
        .await
    }

    /// The prompt `name` with `arguments` (answering the server's questions,
    /// if it asks).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, ClientError> {
        self.get_prompt_with(name, arguments, None).await
    }

    /// The prompt `name` with `arguments` for the client of `context` (a
    /// gateway's render): the server's questions about it are asked of that
    /// client, as for a call with
    /// [`CallOptions::relay_asks`](crate::CallOptions::relay_asks).
    pub async fn get_prompt_asking(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        context: ToolContext,
    ) -> Result<GetPromptResult, ClientError> {
        self.get_prompt_with(name, arguments, Some(context)).await
    }

    async fn get_prompt_with(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        asking: Option<ToolContext>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut route = self.route();
        route.name = Some(name.to_owned());
        let mut params = GetPromptParams::new(name, arguments);
        params.meta = match asking {
            Some(context) => self.relaying(&mut route, context),
            None => self.request_meta(),
        };
        let raw = self
            .request_in_rounds(
                methods::PROMPTS_GET,
                &route,
                self.inner.options.request_timeout,
                &mut params,
            )
            .await?;
        raw.parse(methods::PROMPTS_GET)
    }

    /// Suggestions for the argument `argument` of what `reference` names,
    /// given its value so far.
    pub async fn complete(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
    ) -> Result<Completion, ClientError> {
        self.complete_with(reference, argument, value, &BTreeMap::new())
            .await
    }

    /// Suggestions for the argument `argument` of what `reference` names,
    /// given its value so far and the values of the others already chosen
    /// (the request's `context.arguments`, when any).
    pub async fn complete_with(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
        others: &BTreeMap<String, String>,
    ) -> Result<Completion, ClientError> {
        #[derive(serde::Deserialize)]
        struct Answer {
            completion: Completion,
        }
        let mut params = Map::new();
        params.insert(
            "ref".into(),
            serde_json::to_value(&reference).unwrap_or(Value::Null),
        );
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        if !others.is_empty() {
            params.insert("context".into(), json!({ "arguments": others }));
        }
        let answer: Answer = self
            .simple(methods::COMPLETION_COMPLETE, &self.params(params))
            .await?;
        Ok(answer.completion)
    }
}
