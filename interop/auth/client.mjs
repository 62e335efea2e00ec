#!/usr/bin/env node
// The official TypeScript MCP SDK client (@modelcontextprotocol/sdk, pinned in package.json)
// authorizes to a `toolshape serve --http --auth-issuer ...` endpoint: the SDK's own OAuth client
// (`StreamableHTTPClientTransport` with an `OAuthClientProvider`) discovers the protected resource
// and the test authorization server, registers itself, sends the user through the authorization
// request (PKCE, `resource`), redeems the code, and steps up when a tool needs another scope.
//
// The "user agent" here is headless: the test authorization server approves at once, so
// `redirectToAuthorization` requests the URL itself and reads the code from the redirect.
//
// Usage: node client.mjs --url URL --issuer ISSUER
// Prints `typescript-oauth: N passed, M failed` and exits 1 on any failure.

import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const LABEL = 'typescript-oauth';
const REDIRECT = 'http://127.0.0.1:8976/callback';

const { values: opts } = parseArgs({
  options: { url: { type: 'string' }, issuer: { type: 'string' } },
});
if (!opts.url || !opts.issuer) {
  console.error('usage: node client.mjs --url URL --issuer ISSUER');
  process.exit(2);
}

let passed = 0;
let failed = 0;
function expect(ok, what) {
  if (ok) {
    passed++;
    console.error(`ok: ${what}`);
  } else {
    failed++;
    console.error(`FAILED: ${what}`);
  }
}

/** An in-memory OAuthClientProvider whose user agent follows the authorization server's redirect. */
class HeadlessProvider {
  constructor() {
    this.information = undefined;
    this.tokenSet = undefined;
    this.verifier = undefined;
    this.authorizations = [];
    this.codes = [];
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'ts-sdk-oauth-interop',
      redirect_uris: [REDIRECT],
      // No refresh tokens: holding one, SDK 1.32.2 answers `403 insufficient_scope` by refreshing
      // (which cannot widen the scope, RFC 6749 §6) and gives up, instead of asking the user again.
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information) {
    this.information = information;
  }
  tokens() {
    return this.tokenSet;
  }
  saveTokens(tokens) {
    this.tokenSet = tokens;
  }
  async redirectToAuthorization(url) {
    const target = new URL(url);
    this.authorizations.push(target);
    const response = await fetch(target, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (!location) throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
    const callback = new URL(location);
    this.codes.push(callback.searchParams.get('code'));
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const provider = new HeadlessProvider();
let transport;
const client = new Client({ name: 'ts-sdk-oauth-interop', version: '0.0.0' });

/** Runs `step`; when the SDK stops for the user's authorization, finishes it and runs `step` again. */
async function authorized(step, onRetry) {
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(provider.codes.at(-1));
    await onRetry?.();
    return await step();
  }
}

const fresh = () => {
  transport = new StreamableHTTPClientTransport(new URL(opts.url), { authProvider: provider });
};

const jwtClaims = (token) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));

try {
  fresh();
  await authorized(() => client.connect(transport), fresh);
  expect(provider.authorizations.length === 1, 'connecting took one authorization');
  const first = provider.authorizations[0];
  expect(first.searchParams.get('code_challenge_method') === 'S256', 'PKCE S256 in the authorization request');
  expect(first.searchParams.get('resource') === opts.url, `resource=${first.searchParams.get('resource')}`);
  expect(first.searchParams.get('scope') === 'mcp:tools', `scope from the challenge: ${first.searchParams.get('scope')}`);
  expect(provider.information?.client_id, 'the SDK registered itself (dynamic client registration)');
  const claims = jwtClaims(provider.tokenSet.access_token);
  expect(claims.aud === opts.url && claims.iss === opts.issuer, `token aud=${claims.aud} iss=${claims.iss}`);

  const { tools } = await client.listTools();
  expect(tools.length === 7, `${tools.length} tools listed`);
  const info = await client.callTool({ name: 'file_info', arguments: { path: 'hello.txt' } });
  expect(!info.isError && info.structuredContent?.kind === 'file', `file_info: ${JSON.stringify(info.structuredContent)}`);

  // read_text needs files:read too: 403 insufficient_scope, the SDK asks again.
  const read = await authorized(() => client.callTool({ name: 'read_text', arguments: { path: 'hello.txt' } }));
  const text = read.content?.find((c) => c.type === 'text')?.text ?? '';
  expect(!read.isError && text.includes('hello from the workspace'), `read_text after step-up: ${JSON.stringify(text)}`);
  expect(provider.authorizations.length === 2, `${provider.authorizations.length} authorizations in all`);
  const second = provider.authorizations.at(-1)?.searchParams.get('scope') ?? '';
  expect(second.split(' ').includes('files:read'), `step-up scope: ${second}`);

  const stats = await (await fetch(`${opts.issuer}/stats`)).json();
  expect(stats.registrations === 1 && stats.code_grants === 2 && stats.refused === 0, `authorization server: ${JSON.stringify(stats)}`);
  await client.close();
} catch (error) {
  expect(false, `unexpected error: ${error?.stack ?? error}`);
}

console.log(`${LABEL}: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
