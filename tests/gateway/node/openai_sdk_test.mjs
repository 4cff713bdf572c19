// The official openai SDK (4.104.0, pinned in package.json) pointed at Tollgate's gateway, the way a service
// would use it: only the base URL changes. Runs against whatever GATEWAY_URL names (the gateway, or the
// simulator directly), prints one JSON line per check on stdout and exits non-zero when any check fails.
//
//   GATEWAY_URL=http://127.0.0.1:PORT/openai/v1 GATEWAY_TOKEN=... node openai_sdk_test.mjs [MODE]
//
// MODE: chat (one non-streaming completion), stream (one streaming completion with usage), all (chat, then
// stream; the default), flood (FLOOD_N P2 completions at once and, FLOOD_P0_DELAY_MS later, one P0 stream).
// Other settings: OPENAI_SDK_DIR (the folder setup.sh installs into, $BUILD_DIR/node-openai) or NODE_PATH
// (its node_modules) say where the SDK is; MODEL, MAX_TOKENS, SDK_TIMEOUT_MS (the SDK sends it to the gateway
// as x-stainless-timeout, the request's deadline), SDK_MAX_RETRIES (default: the SDK's own, 2).
//
// Every HTTP attempt the SDK makes goes through a recording fetch (the SDK's own node-fetch underneath), so a
// 429 or 5xx the SDK retried away still shows, and a stream's raw SSE bytes can be checked for [DONE].
// Written for Node 18 (Debian 12's nodejs): nothing newer. Checked on Debian's 18.20.4: there the SDK's
// node-fetch 2.7 fails a *non-streaming* answer sent chunked with a false "Premature close" (node-fetch#1576,
// #1767; Node 20 reads it fine), so a server this SDK talks to must answer non-streaming with Content-Length.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { header, loadPackage, recordingFetch } from './sdk_harness.mjs';

const EXIT_FAILED = 1;
const EXIT_SETUP = 2;

let failures = 0;
function report(check, ok, fields) {
  if (!ok) failures += 1;
  // check and ok first, and never overridden by a field of the same name
  process.stdout.write(JSON.stringify(Object.assign({ check, ok }, fields, { check, ok })) + '\n');
}

function num(name, fallback) {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) {
    report('setup', false, { error: `${name} must be a non-negative number, got "${v}"` });
    process.exit(EXIT_SETUP);
  }
  return n;
}

function loadSdk() {
  const tried = [];
  const sdk = loadPackage('openai', [process.env.OPENAI_SDK_DIR], fromMain, tried);
  if (sdk) return sdk;
  report('setup', false, { error: `the openai SDK is not installed; looked in: ${tried.join('; ')}. ` +
                                  'Run scripts/setup.sh (it installs it into $BUILD_DIR/node-openai).' });
  process.exit(EXIT_SETUP);
}

function fromMain(req, main) {
  const mod = req(main);
  const OpenAI = mod.default || mod.OpenAI || mod;
  const pkg = req(join(main, '..', 'package.json'));
  // node-fetch is the SDK's own transport on Node; resolve the copy the SDK itself uses.
  const nodeFetch = createRequire(main)('node-fetch');
  return { OpenAI, version: pkg.version, nodeFetch };
}

const { OpenAI, version: sdkVersion, nodeFetch } = loadSdk();

const baseURL = process.env.GATEWAY_URL;
if (!baseURL) {
  report('setup', false, { error: 'GATEWAY_URL is not set (e.g. http://127.0.0.1:8088/openai/v1)' });
  process.exit(EXIT_SETUP);
}
const mode = process.argv[2] || 'all';
if (!['chat', 'stream', 'all', 'flood'].includes(mode)) {
  report('setup', false, { error: `unknown mode "${mode}": expected chat, stream, all or flood` });
  process.exit(EXIT_SETUP);
}
const model = process.env.MODEL || 'gpt-4o-mini';
const maxTokens = num('MAX_TOKENS', 16);
const t0 = performance.now();
const since = (t) => Math.round((t - t0) * 10) / 10;  // ms since the script started, 0.1 ms steps

// --- every HTTP attempt, as the SDK made it ---
const attempts = [];
const recordAttempt = recordingFetch(nodeFetch, attempts, () => since(performance.now()), (url, init) => ({
  path: new URL(String(url)).pathname,
  tier: header(init && init.headers, 'x-tollgate-tier') || null,
  retryCount: Number(header(init && init.headers, 'x-stainless-retry-count') || 0),
}));

const clientOptions = {
  apiKey: process.env.GATEWAY_TOKEN || 'no-gateway-token',
  baseURL,
  fetch: recordAttempt,
  timeout: num('SDK_TIMEOUT_MS', 60000),
};
if (process.env.SDK_MAX_RETRIES) clientOptions.maxRetries = num('SDK_MAX_RETRIES', 2);
const client = new OpenAI(clientOptions);

const tierHeaders = (tier) => ({ headers: { 'X-Tollgate-Tier': tier } });
const messages = [{ role: 'user', content: 'Say hello from the Tollgate gateway test.' }];

function errorFields(e) {
  return { error: String(e && e.message), status: e && e.status !== undefined ? e.status : null,
           name: e && e.constructor ? e.constructor.name : typeof e };
}

// Attempts answered with 429/5xx, failed outright, or made as retries: each one means the client saw more
// than one answer, which the gateway exists to prevent.
function troubledAttempts(list) {
  return list.filter((a) => a.error || a.retryCount > 0 || a.status === 429 || a.status >= 500)
    .map(({ raw, ...rest }) => rest);
}

// The raw SSE: events split on blank lines; the `data:` events, and whether [DONE] is the last one.
function sseSummary(raw) {
  const events = raw.replace(/\r\n/g, '\n').split('\n\n').map((e) => e.trim()).filter((e) => e.length > 0);
  const data = events.map((e) => e.split('\n').filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trimStart()).join('\n')).filter((d) => d.length > 0);
  const doneAt = data.indexOf('[DONE]');
  return { dataEvents: data.length, doneLast: doneAt >= 0 && doneAt === data.length - 1 };
}

async function checkChat(name, tier) {
  const first = attempts.length;
  const start = performance.now();
  try {
    const { data, response } = await client.chat.completions
      .create({ model, messages, max_tokens: maxTokens }, tierHeaders(tier)).withResponse();
    const usage = data && data.usage;
    const problems = [];
    if (response.status !== 200) problems.push(`status ${response.status}`);
    if (!data || typeof data.id !== 'string') problems.push('no "id" in the body');
    if (!usage || typeof usage.total_tokens !== 'number') problems.push('no usage.total_tokens in the body');
    const troubled = troubledAttempts(attempts.slice(first));
    if (troubled.length) problems.push('the SDK saw an answer other than one 200');
    report(name, problems.length === 0, {
      status: response.status, ms: Math.round((performance.now() - start) * 10) / 10, id: data && data.id, usage,
      choices: Array.isArray(data && data.choices) ? data.choices.length : null,
      attempts: attempts.length - first, troubled, problems,
    });
    return true;
  } catch (e) {
    report(name, false, { ...errorFields(e), attempts: attempts.length - first,
                          troubled: troubledAttempts(attempts.slice(first)) });
    return false;
  }
}

// One streaming completion with include_usage: chunk arrival times as the SDK yields them, the usage chunk,
// and the raw stream ending in `data: [DONE]`. `during` is sampled at the first and the last chunk.
async function checkStream(name, tier, during = () => ({})) {
  const first = attempts.length;
  const start = performance.now();
  const arrivals = [];
  let usage = null, finish = null, content = '', badChunks = 0;
  let atFirst = null;
  try {
    const stream = await client.chat.completions.create(
      { model, messages, max_tokens: maxTokens, stream: true, stream_options: { include_usage: true } },
      tierHeaders(tier));
    for await (const chunk of stream) {
      arrivals.push(Math.round((performance.now() - start) * 10) / 10);
      if (arrivals.length === 1) atFirst = during();
      if (!chunk || (chunk.object !== undefined && chunk.object !== 'chat.completion.chunk')) badChunks += 1;
      if (chunk && chunk.usage) usage = chunk.usage;
      for (const c of (chunk && chunk.choices) || []) {
        if (c.delta && typeof c.delta.content === 'string') content += c.delta.content;
        if (c.finish_reason) finish = c.finish_reason;
      }
    }
  } catch (e) {
    report(name, false, { ...errorFields(e), chunks: arrivals.length, arrivalsMs: arrivals,
                          troubled: troubledAttempts(attempts.slice(first)) });
    return false;
  }
  const atEnd = during();
  const mine = attempts.slice(first);
  const last = mine[mine.length - 1];
  const sse = last && typeof last.raw === 'string' ? sseSummary(last.raw) : null;
  const gaps = arrivals.slice(1).map((t, i) => Math.round((t - arrivals[i]) * 10) / 10);
  const problems = [];
  if (!sse) problems.push('the response was not text/event-stream');
  else {
    if (!sse.doneLast) problems.push('the stream did not end with data: [DONE]');
    if (sse.dataEvents !== arrivals.length + 1) problems.push(`${sse.dataEvents} data events for ${arrivals.length} chunks`);
  }
  if (arrivals.length < 2) problems.push('fewer than two chunks');
  if (badChunks) problems.push(`${badChunks} chunks not shaped like chat.completion.chunk`);
  if (!usage || typeof usage.total_tokens !== 'number') problems.push('no usage chunk (stream_options.include_usage)');
  if (finish === null) problems.push('no finish_reason');
  if (troubledAttempts(mine).length) problems.push('the SDK saw an answer other than one 200');
  report(name, problems.length === 0, {
    status: last ? last.status : null, chunks: arrivals.length, firstChunkMs: arrivals.length ? arrivals[0] : null,
    arrivalsMs: arrivals, maxGapMs: gaps.length ? Math.max(...gaps) : null, usage, finishReason: finish,
    contentChars: content.length, sse, atFirstChunk: atFirst, atEnd, attempts: mine.length,
    troubled: troubledAttempts(mine), problems,
  });
  return problems.length === 0;
}

// FLOOD_N P2 completions at once, then one P0 stream: the P0 stream's chunks should keep flowing while the
// P2s wait in their queue, and no call may see a 429 while its deadline allows waiting.
async function flood() {
  const n = Math.floor(num('FLOOD_N', 20));
  const delayMs = num('FLOOD_P0_DELAY_MS', 100);
  const first = attempts.length;
  const p2 = [];
  let settled = 0;
  for (let i = 0; i < n; i += 1) {
    const start = performance.now();
    p2.push(client.chat.completions.create({ model, messages, max_tokens: maxTokens }, tierHeaders('P2'))
      .then(() => ({ ok: true, ms: performance.now() - start }),
            (e) => ({ ok: false, ms: performance.now() - start, failure: errorFields(e) }))
      .finally(() => { settled += 1; }));
  }
  await new Promise((r) => setTimeout(r, delayMs));
  const p2Pending = () => ({ p2Pending: n - settled });
  const streamOk = await checkStream('flood.p0_stream', 'P0', p2Pending);
  const results = await Promise.all(p2);
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  const round = (v) => Math.round(v * 10) / 10;
  const threw = results.filter((r) => !r.ok);
  const mine = attempts.slice(first).filter((a) => a.tier === 'P2');
  const troubled = troubledAttempts(mine);
  report('flood.p2', threw.length === 0 && troubled.length === 0, {
    requests: n, succeeded: n - threw.length, threw: threw.length,
    errors: threw.slice(0, 5).map((r) => ({ ms: round(r.ms), ...r.failure })),
    msMin: ms.length ? round(ms[0]) : null, msMedian: ms.length ? round(ms[Math.floor(ms.length / 2)]) : null,
    msMax: ms.length ? round(ms[ms.length - 1]) : null,
    attempts: mine.length, troubled: troubled.slice(0, 10),
  });
  return streamOk;
}

report('setup', true, { sdk: sdkVersion, node: process.version, baseURL, mode, model });
if (mode === 'chat' || mode === 'all') await checkChat('chat', 'P1');
if (mode === 'stream' || mode === 'all') await checkStream('stream', 'P1');
if (mode === 'flood') await flood();
process.exitCode = failures ? EXIT_FAILED : 0;
