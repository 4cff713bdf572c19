// The official Anthropic TypeScript SDK (@anthropic-ai/sdk 0.41.0, pinned in package.json: the last release for
// Node 18, Debian 12's nodejs; 0.50 declares engines node >= 20) pointed at Tollgate's gateway on an
// "anthropic" route, the way a service would use it: only the base URL changes, the gateway's client token goes
// where the Anthropic key went (the SDK sends it as X-Api-Key). Prints one JSON line per check on stdout and exits
// non-zero when any check fails.
//
//   GATEWAY_URL=http://127.0.0.1:PORT/anthropic GATEWAY_ROOT=http://127.0.0.1:PORT SIM_URL=http://127.0.0.1:SIMPORT \
//   GATEWAY_TOKEN=... node anthropic_sdk_test.mjs
//
// Written for tests/gateway/gateway-e2e-anthropic.json (test_gateway_clients.py TOLLGATE anthropic-sdk starts it):
// group "messages" (the route's default), group "tight" (3 requests per 4 s fixed window, its first request here
// starts the window); the simulator speaks Anthropic's dialect and streams 8 deltas 150 ms apart. The checks run
// in order and share that state (the tight window is spent by one check and read by the next).
//
// Other settings: ANTHROPIC_SDK_DIR or OPENAI_SDK_DIR (the folder scripts/setup.sh installs both SDKs into,
// $BUILD_DIR/node-openai) or NODE_PATH (its node_modules) say where the SDK is; MODEL, MAX_TOKENS.
//
// Every HTTP attempt the SDK makes goes through a recording fetch (the SDK's own node-fetch underneath), so the
// attempts a retry made, their headers and their timing show, and a stream's raw SSE can be compared.
//
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { header, loadPackage, recordingFetch } from './sdk_harness.mjs';

const EXIT_FAILED = 1;
const EXIT_SETUP = 2;

let failures = 0;
function report(check, ok, fields) {
  const out = Object.assign({ check, ok }, fields, { check, ok });
  if (!ok) failures += 1;
  process.stdout.write(JSON.stringify(out) + '\n');
  return ok;
}

function setupFailed(error) {
  report('setup', false, { error });
  process.exit(EXIT_SETUP);
}

function loadSdk() {
  const tried = [];
  const sdk = loadPackage('@anthropic-ai/sdk', [process.env.ANTHROPIC_SDK_DIR, process.env.OPENAI_SDK_DIR], fromMain,
                          tried);
  if (sdk) return sdk;
  setupFailed(`the @anthropic-ai/sdk package is not installed; looked in: ${tried.join('; ')}. ` +
              'Run scripts/setup.sh (it installs it into $BUILD_DIR/node-openai).');
}

function fromMain(req, main) {
  const mod = req(main);
  const Anthropic = mod.default || mod.Anthropic || mod;
  const pkg = req(join(main, '..', 'package.json'));
  const nodeFetch = createRequire(main)('node-fetch');  // the SDK's own transport on Node
  return { Anthropic, version: pkg.version, nodeFetch };
}

const { Anthropic, version: sdkVersion, nodeFetch } = loadSdk();

const baseURL = process.env.GATEWAY_URL;
const gatewayRoot = process.env.GATEWAY_ROOT;
const simURL = process.env.SIM_URL;
if (!baseURL || !gatewayRoot || !simURL) setupFailed('GATEWAY_URL, GATEWAY_ROOT and SIM_URL must be set');
const token = process.env.GATEWAY_TOKEN || '';
const model = process.env.MODEL || 'claude-3-5-haiku-latest';
const maxTokens = Number(process.env.MAX_TOKENS || 16);
const t0 = performance.now();
const now = () => Math.round((performance.now() - t0) * 10) / 10;  // ms since the script started
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- every HTTP attempt, as the SDK made it ---
const attempts = [];
const kept = ['content-type', 'content-length', 'transfer-encoding', 'retry-after', 'retry-after-ms',
              'x-should-retry', 'request-id', 'anthropic-ratelimit-requests-remaining'];
const recordAttempt = recordingFetch(nodeFetch, attempts, now, (url, init) => {
  const h = init && init.headers;
  return {
    path: new URL(String(url)).pathname,
    group: header(h, 'x-ratelimit-group') || null,
    retryCount: Number(header(h, 'x-stainless-retry-count') || 0),
    stainlessTimeout: header(h, 'x-stainless-timeout') || null,
    apiKeySent: header(h, 'x-api-key') !== undefined,
  };
}, kept);
const shown = (list) => list.map(({ raw, ...rest }) => rest);

function client(extra = {}) {
  // authToken: null, or an ANTHROPIC_AUTH_TOKEN in the environment would go along as Authorization: Bearer.
  return new Anthropic({ apiKey: token, authToken: null, baseURL, fetch: recordAttempt, timeout: 60000, ...extra });
}
const messages = [{ role: 'user', content: 'Say hello from the Tollgate gateway test.' }];
const params = (extra = {}) => ({ model, max_tokens: maxTokens, messages, ...extra });

function errorFields(e) {
  return { error: String(e && e.message), status: e && e.status !== undefined ? e.status : null,
           name: e && e.constructor ? e.constructor.name : typeof e, body: e && e.error !== undefined ? e.error : null };
}

// --- the gateway's /metrics and the simulator's /__sim/stats ---
async function metric(name, labels) {
  const text = await (await nodeFetch(`${gatewayRoot}/metrics`)).text();
  let sum = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
      seen = true;
    }
  }
  return seen ? sum : 0;
}
async function simGroup(group) {
  const stats = await (await nodeFetch(`${simURL}/__sim/stats`)).json();
  const g = (stats.groups && stats.groups[group]) || {};
  return { requests: g.requests || 0, in_flight: g.in_flight || 0, streams_started: g.streams_started || 0,
           streams_completed: g.streams_completed || 0, streams_aborted: g.streams_aborted || 0 };
}
// Polls `read` until `done(value)` or `ms` pass; the last value read.
async function until(read, done, ms) {
  const end = performance.now() + ms;
  let v = await read();
  while (!done(v) && performance.now() < end) {
    await sleep(50);
    v = await read();
  }
  return v;
}

// The raw SSE split into events: their `event:` names (ping included; the SDK drops pings).
function sseNames(raw) {
  return raw.replace(/\r\n/g, '\n').split('\n\n').map((e) => e.trim()).filter((e) => e.length > 0)
    .map((e) => (e.split('\n').find((l) => l.startsWith('event:')) || 'event: ').slice(6).trim());
}

// Anthropic's documented order: message_start, per block content_block_start, content_block_delta...,
// content_block_stop, then message_delta..., message_stop last.
function orderProblems(types) {
  const problems = [];
  if (types[0] !== 'message_start') problems.push(`first event is ${types[0]}, not message_start`);
  if (types[types.length - 1] !== 'message_stop') problems.push(`last event is ${types[types.length - 1]}`);
  let open = false;
  let blocks = 0;
  let deltas = 0;
  let messageDelta = false;
  for (const t of types.slice(1, -1)) {
    if (t === 'content_block_start') {
      if (open || messageDelta) problems.push('content_block_start inside a block or after message_delta');
      open = true;
      blocks += 1;
    } else if (t === 'content_block_delta') {
      if (!open) problems.push('content_block_delta outside a block');
      deltas += 1;
    } else if (t === 'content_block_stop') {
      if (!open) problems.push('content_block_stop without a start');
      open = false;
    } else if (t === 'message_delta') {
      if (open) problems.push('message_delta inside a block');
      messageDelta = true;
    } else if (t !== 'ping') {
      problems.push(`unexpected event ${t}`);
    }
  }
  if (!blocks) problems.push('no content block');
  if (deltas < 2) problems.push(`${deltas} content_block_delta events`);
  if (!messageDelta) problems.push('no message_delta');
  return { problems, blocks, deltas };
}

const tokensUsed = (group) => metric('tollgate_tokens_used_total', { group });

// (a) messages.create, not streamed: one 200, an Anthropic Message with content and usage.
async function checkCreate() {
  const first = attempts.length;
  const before = await tokensUsed('messages');
  let data, response;
  try {
    ({ data, response } = await client().messages.create(params()).withResponse());
  } catch (e) {
    report('create', false, { ...errorFields(e), attempts: shown(attempts.slice(first)) });
    return;
  }
  const mine = attempts.slice(first);
  const problems = [];
  if (response.status !== 200) problems.push(`status ${response.status}`);
  if (mine.length !== 1 || mine[0].status !== 200) problems.push('the SDK saw an answer other than one 200');
  if (!mine[0] || !mine[0].headers['content-length']) problems.push('not answered with Content-Length');
  if (!data || typeof data.id !== 'string') problems.push('no "id" in the body');
  report('create', problems.length === 0, { status: response.status, attempts: shown(mine), problems });

  // The Messages API's Message: what the SDK's types promise the caller.
  const shape = [];
  if (data.type !== 'message') shape.push(`type is ${JSON.stringify(data.type)}, not "message"`);
  if (data.role !== 'assistant') shape.push(`role is ${JSON.stringify(data.role)}`);
  const text = Array.isArray(data.content) ? data.content.filter((b) => b && b.type === 'text') : [];
  if (!text.length || typeof text[0].text !== 'string') shape.push('no text block in content[]');
  if (!data.usage || typeof data.usage.input_tokens !== 'number' || typeof data.usage.output_tokens !== 'number')
    shape.push('no usage.input_tokens/output_tokens');
  if (!data.stop_reason) shape.push('no stop_reason');
  report('create.message_shape', shape.length === 0, { body: data, problems: shape });

  // The gateway counted what the answer says was used (here: whichever usage fields the body carries).
  const u = data.usage || {};
  const said = typeof u.total_tokens === 'number' ? u.total_tokens
    : (u.input_tokens || 0) + (u.output_tokens || 0) + (u.prompt_tokens || 0) + (u.completion_tokens || 0);
  const after = await until(() => tokensUsed('messages'), (v) => v !== before, 2000);
  report('create.tokens_counted', after - before === said && said > 0,
         { counted: after - before, bodySays: said, usage: u });
}

// (b) messages.stream(): the events in Anthropic's order, spread over time as the upstream sent them, the final
// message with usage; the gateway counts the tokens that usage reports.
async function checkStream() {
  const first = attempts.length;
  const before = await tokensUsed('messages');
  const events = [];
  let text = '';
  let final;
  const stream = client().messages.stream(params());
  stream.on('streamEvent', (ev) => events.push({ type: ev.type, at: now() }));
  stream.on('text', (t) => { text += t; });
  try {
    final = await stream.finalMessage();
  } catch (e) {
    report('stream', false, { ...errorFields(e), events: events.map((e) => e.type), attempts: shown(attempts.slice(first)) });
    return;
  }
  const mine = attempts.slice(first);
  const last = mine[mine.length - 1];
  const types = events.map((e) => e.type);
  const order = orderProblems(types);
  const problems = [...order.problems];
  if (mine.length !== 1 || !last || last.status !== 200) problems.push('the SDK saw an answer other than one 200');
  if (!last || !String(last.headers['content-type'] || '').startsWith('text/event-stream'))
    problems.push('not text/event-stream');
  if (last && last.headers['content-length']) problems.push('a stream answered with Content-Length');
  const raw = last && typeof last.raw === 'string' ? sseNames(last.raw) : [];
  const rawNoPing = raw.filter((n) => n !== 'ping');
  if (JSON.stringify(rawNoPing) !== JSON.stringify(types)) problems.push('the SDK yielded other events than the raw SSE');
  // Relayed as they came: 8 deltas 150 ms apart upstream; a gateway that buffered would hand them over at once.
  const deltaTimes = events.filter((e) => e.type === 'content_block_delta').map((e) => e.at);
  const spreadMs = deltaTimes.length ? deltaTimes[deltaTimes.length - 1] - deltaTimes[0] : 0;
  if (spreadMs < 0.5 * 150 * Math.max(0, deltaTimes.length - 1)) problems.push(`deltas arrived within ${spreadMs} ms`);
  const u = final && final.usage;
  if (!u || !(u.input_tokens > 0) || !(u.output_tokens > 0)) problems.push('the final message has no usage');
  if (!final || final.stop_reason !== 'end_turn') problems.push(`stop_reason ${final && final.stop_reason}`);
  const finalText = final && Array.isArray(final.content) ? final.content.map((b) => b.text || '').join('') : '';
  if (!finalText || finalText !== text) problems.push('the final message text is not the deltas joined');
  report('stream', problems.length === 0, {
    events: types, rawEvents: raw, deltas: order.deltas, deltaSpreadMs: spreadMs, usage: u,
    stopReason: final && final.stop_reason, textChars: text.length, attempts: shown(mine), problems,
  });

  // Anthropic reports a stream's usage in two events: input tokens in message_start, output tokens (cumulative)
  // in message_delta. The gateway's count must be their sum, as the SDK's final message has it.
  const said = u ? u.input_tokens + u.output_tokens : -1;
  const after = await until(() => tokensUsed('messages'), (v) => v !== before, 2000);
  report('stream.tokens_counted', after - before === said,
         { counted: after - before, sdkUsage: u, expected: said });
}

// (b') messages.create({stream: true}): the raw events, message_start's usage and message_delta's.
async function checkRawStream() {
  const first = attempts.length;
  const types = [];
  let startUsage = null, deltaUsage = null;
  try {
    const stream = await client().messages.create(params({ stream: true }));
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'message_start') startUsage = ev.message && ev.message.usage;
      if (ev.type === 'message_delta') deltaUsage = ev.usage;
    }
  } catch (e) {
    report('stream.raw', false, { ...errorFields(e), events: types, attempts: shown(attempts.slice(first)) });
    return;
  }
  const problems = orderProblems(types).problems;
  if (!startUsage || !(startUsage.input_tokens > 0)) problems.push('message_start has no usage.input_tokens');
  if (!deltaUsage || !(deltaUsage.output_tokens > 0)) problems.push('message_delta has no usage.output_tokens');
  const mine = attempts.slice(first);
  if (mine.length !== 1 || mine[0].status !== 200) problems.push('the SDK saw an answer other than one 200');
  report('stream.raw', problems.length === 0, { events: types, startUsage, deltaUsage, attempts: shown(mine), problems });
}

const tight = (deadline) => ({ headers: { 'X-RateLimit-Group': 'tight',
                                          ...(deadline ? { 'X-Tollgate-Deadline': String(deadline) } : {}) } });

// Spends the tight group's window (3 requests) through the SDK.
async function spendTight(n, name) {
  const c = client({ maxRetries: 0 });
  const results = await Promise.allSettled(Array.from({ length: n }, () => c.messages.create(params(), tight())));
  const bad = results.filter((r) => r.status !== 'fulfilled');
  report(name, bad.length === 0, { requests: n, failed: bad.map((r) => errorFields(r.reason)) });
}

// Anthropic's error body: {"type": "error", "error": {"type": T, "message": "..."}}.
function anthropicShape(body, type) {
  const p = [];
  if (!body || body.type !== 'error') p.push('body.type is not "error"');
  if (!body || !body.error || body.error.type !== type) p.push(`error.type is ${JSON.stringify(body && body.error && body.error.type)}, not "${type}"`);
  if (!body || !body.error || typeof body.error.message !== 'string' || !body.error.message) p.push('no error.message');
  return p;
}

// (c) A request the gateway sheds: held until its deadline, then 429 as an Anthropic rate_limit_error, with the
// wait in retry-after(-ms) and x-should-retry: true (the SDK may come back then).
async function checkShed() {
  await spendTight(3, 'shed.spend_window');
  const first = attempts.length;
  const start = performance.now();
  try {
    await client({ maxRetries: 0 }).messages.create(params(), tight(0.5));
    report('shed', false, { error: 'served while the window was spent', attempts: shown(attempts.slice(first)) });
    return;
  } catch (e) {
    const held = performance.now() - start;
    const mine = attempts.slice(first);
    const h = e.headers || {};
    const ms = Number(h['retry-after-ms']);
    const problems = anthropicShape(e.error, 'rate_limit_error');
    if (!(e instanceof Anthropic.RateLimitError) || e.status !== 429) problems.push(`${e.constructor.name} ${e.status}, not RateLimitError 429`);
    if (mine.length !== 1) problems.push(`${mine.length} attempts with maxRetries 0`);
    if (!(held >= 400 && held < 2500)) problems.push(`held ${Math.round(held)} ms, not until the 0.5 s deadline`);
    // The window's reset, 4 s at most from its first request; Anthropic's reset headers are RFC 3339 in whole
    // seconds, so the engine's picture may be up to a second later than the simulator's own reset.
    if (!(ms > 1000 && ms <= 5000)) problems.push(`retry-after-ms ${h['retry-after-ms']} is not the window's reset`);
    if (Number(h['retry-after']) !== Math.ceil(ms / 1000)) problems.push('retry-after is not retry-after-ms rounded up');
    if (h['x-should-retry'] !== 'true') problems.push(`x-should-retry ${h['x-should-retry']}, not true`);
    report('shed', problems.length === 0, { ...errorFields(e), heldMs: Math.round(held),
                                           headers: { 'retry-after': h['retry-after'], 'retry-after-ms': h['retry-after-ms'],
                                                      'x-should-retry': h['x-should-retry'] },
                                           attempts: shown(mine), problems });
  }
}

// (c') The SDK's own retry honours the gateway's word: after the 429 it waits retry-after-ms (not its own 0.5-1 s
// backoff), comes back with x-stainless-retry-count: 1 once the window has reset, and is served.
async function checkShedRetry() {
  const first = attempts.length;
  let ok = false, err = null;
  try {
    await client({ maxRetries: 2 }).messages.create(params(), tight(0.5));
    ok = true;
  } catch (e) {
    err = errorFields(e);
  }
  const mine = attempts.slice(first);
  const problems = [];
  if (!ok) problems.push('the retried call failed');
  const refused = mine[0];
  const retry = mine[1];
  if (!refused || refused.status !== 429) problems.push('the first attempt was not a 429');
  if (!retry) problems.push('the SDK did not retry');
  let waitedMs = null, askedMs = null;
  if (refused && retry) {
    askedMs = Number(refused.headers['retry-after-ms']);
    waitedMs = Math.round(retry.start - refused.headersAt);
    if (refused.headers['x-should-retry'] !== 'true') problems.push(`x-should-retry ${refused.headers['x-should-retry']}`);
    if (!(waitedMs >= askedMs - 50 && waitedMs <= askedMs + 750))
      problems.push(`the SDK came back after ${waitedMs} ms; the gateway said ${askedMs} ms`);
    if (retry.retryCount !== 1) problems.push(`x-stainless-retry-count ${retry.retryCount} on the retry`);
    if (retry.status !== 200) problems.push(`the retry got ${retry.status}`);
  }
  if (mine.length !== 2) problems.push(`${mine.length} attempts, expected the 429 and one retry`);
  report('shed.retry_honoured', problems.length === 0, { ok, err, waitedMs, askedMs, attempts: shown(mine), problems });
}

// (c'') x-should-retry: false when the wait is past the client's own timeout: the SDK does not retry again.
// SDK timeout 1.5 s: it sends x-stainless-timeout: 1, the gateway's deadline is 0.5 s; a wait longer than the 1 s
// the client has is answered x-should-retry: false (a shorter one, when the window is about to turn, true).
async function checkShouldRetryFalse() {
  await spendTight(2, 'noretry.spend_window');  // the retry above took the window's first
  const first = attempts.length;
  const start = performance.now();
  try {
    await client({ maxRetries: 2, timeout: 1500 }).messages.create(params(), tight());
    report('noretry', false, { error: 'served while the window was spent' });
    return;
  } catch (e) {
    const held = Math.round(performance.now() - start);
    const mine = attempts.slice(first);
    const h = e.headers || {};
    const problems = anthropicShape(e.error, 'rate_limit_error');
    if (!(e instanceof Anthropic.RateLimitError)) problems.push(`${e.constructor.name} ${e.status}, not RateLimitError`);
    if (h['x-should-retry'] !== 'false') problems.push(`x-should-retry ${h['x-should-retry']}, not false`);
    // Each attempt has its own timeout, so a wait shorter than it is worth a retry: an earlier answer may have said
    // x-should-retry: true (the window's reset was under a second away), and the SDK then came back once told.
    if (mine.length < 1 || mine.length > 3) problems.push(`${mine.length} attempts`);
    mine.slice(0, -1).forEach((a, i) => {
      if (a.headers['x-should-retry'] !== 'true') problems.push(`attempt ${i + 1}: retried after x-should-retry ${a.headers['x-should-retry']}`);
      const waited = mine[i + 1].start - a.headersAt;
      if (waited < Number(a.headers['retry-after-ms']) - 50) problems.push(`attempt ${i + 2} came back after ${waited} ms`);
    });
    for (const a of mine) if (a.stainlessTimeout !== '1') problems.push(`x-stainless-timeout ${a.stainlessTimeout}`);
    report('noretry', problems.length === 0, { ...errorFields(e), heldMs: held, headers: h, attempts: shown(mine), problems });
    // The deadline is half the 1 s the SDK announced: each 429 must reach the SDK well inside its own 1.5 s
    // timeout, or the SDK sees a timeout instead, which it retries whatever the gateway would have said.
    const answeredMs = mine.map((a) => Math.round(a.headersAt - a.start));
    report('noretry.deadline_kept', answeredMs.every((ms) => ms < 1000), { answeredMs, deadlineMs: 500, sdkTimeoutMs: 1500,
                                                   message: e.error && e.error.error && e.error.error.message });
  }
}

// (d) Refusals: a wrong or missing key is an AuthenticationError, a bad Tollgate header a BadRequestError, an
// oversized body a 413, each in Anthropic's error shape, none retried, none reaching the upstream.
async function checkRefusals() {
  const sentBefore = (await simGroup('messages')).requests;
  const cases = [
    { name: 'errors.wrong_key', make: () => client({ apiKey: token.slice(0, -1) + 'X' }),
      body: params(), status: 401, cls: 'AuthenticationError', type: 'authentication_error' },
    // No key at all: X-Api-Key explicitly left out (the SDK refuses to send no credential otherwise).
    { name: 'errors.no_key', make: () => client({ apiKey: null }), opts: { headers: { 'x-api-key': null } },
      body: params(), status: 401, cls: 'AuthenticationError', type: 'authentication_error' },
    { name: 'errors.bad_tier', make: () => client(), opts: { headers: { 'X-Tollgate-Tier': 'P5' } },
      body: params(), status: 400, cls: 'BadRequestError', type: 'invalid_request_error', mentions: 'X-Tollgate-Tier' },
    { name: 'errors.too_large', make: () => client(),
      body: params({ messages: [{ role: 'user', content: 'x'.repeat(70000) }] }), status: 413, cls: 'APIError',
      type: 'request_too_large' },
  ];
  for (const c of cases) {
    const first = attempts.length;
    try {
      await c.make().messages.create(c.body, c.opts || {});
      report(c.name, false, { error: 'served', attempts: shown(attempts.slice(first)) });
    } catch (e) {
      const mine = attempts.slice(first);
      const problems = anthropicShape(e.error, c.type);
      if (e.status !== c.status) problems.push(`status ${e.status}, not ${c.status}`);
      if (!(e instanceof Anthropic[c.cls])) problems.push(`${e.constructor.name}, not ${c.cls}`);
      if (mine.length !== 1) problems.push(`${mine.length} attempts: a refusal was retried`);
      if (c.name === 'errors.no_key' && mine[0] && mine[0].apiKeySent) problems.push('the SDK sent an X-Api-Key');
      if (c.mentions && !(e.error && e.error.error && String(e.error.error.message).includes(c.mentions)))
        problems.push(`the message does not name ${c.mentions}`);
      report(c.name, problems.length === 0, { ...errorFields(e), attempts: shown(mine), problems });
    }
  }
  const sentAfter = (await simGroup('messages')).requests;
  report('errors.not_forwarded', sentAfter === sentBefore, { simRequests: `${sentBefore} -> ${sentAfter}` });
}

// (e) A stream aborted mid-way (AbortController) frees the request: the upstream transfer is aborted (the
// simulator counts streams_aborted), nothing stays in flight, and the group serves its next request at once.
async function checkAbort() {
  const before = await simGroup('messages');
  const ac = new AbortController();
  const first = attempts.length;
  let deltas = 0;
  let caught = null;
  const stream = client().messages.stream(params(), { signal: ac.signal });
  stream.on('streamEvent', (ev) => {
    if (ev.type === 'content_block_delta' && ++deltas === 2) ac.abort();
  });
  try {
    await stream.finalMessage();
  } catch (e) {
    caught = e;
  }
  const abortedAt = performance.now();
  const sim = await until(() => simGroup('messages'),
                          (s) => s.streams_aborted > before.streams_aborted && s.in_flight === 0, 5000);
  const freedMs = Math.round(performance.now() - abortedAt);
  const inFlight = await until(() => metric('tollgate_in_flight', { group: 'messages' }), (v) => v === 0, 3000);
  const problems = [];
  if (!caught || caught.constructor.name !== 'APIUserAbortError') problems.push(`the SDK raised ${caught && caught.constructor.name}, not APIUserAbortError`);
  if (deltas !== 2) problems.push(`${deltas} deltas read before the abort took hold`);
  if (sim.streams_aborted !== before.streams_aborted + 1) problems.push('the simulator did not see the stream aborted');
  if (sim.streams_completed !== before.streams_completed) problems.push('the simulator completed the stream anyway');
  if (sim.in_flight !== 0) problems.push(`${sim.in_flight} still in flight at the simulator`);
  if (inFlight !== 0) problems.push(`tollgate_in_flight{group="messages"} ${inFlight}`);
  report('abort', problems.length === 0, { sdkError: caught && errorFields(caught), deltasRead: deltas, freedMs,
                                           sim: { before, after: sim }, gatewayInFlight: inFlight,
                                           attempts: shown(attempts.slice(first)), problems });
  // The group serves the next request: the aborted one holds no concurrency slot.
  const start = performance.now();
  try {
    await client({ maxRetries: 0 }).messages.create(params());
    report('abort.next_served', true, { ms: Math.round(performance.now() - start) });
  } catch (e) {
    report('abort.next_served', false, errorFields(e));
  }
}

report('setup', true, { sdk: sdkVersion, node: process.version, baseURL, model });
await checkCreate();
await checkStream();
await checkRawStream();
await checkShed();
await checkShedRetry();
await checkShouldRetryFalse();
await checkRefusals();
await checkAbort();
process.exitCode = failures ? EXIT_FAILED : 0;
