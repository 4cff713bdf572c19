// What the SDK tests (openai_sdk_test.mjs, anthropic_sdk_test.mjs) share: finding the SDK package, reading a
// header the way either SDK hands headers to its fetch, and a fetch that records every attempt the SDK makes.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { Transform } from 'node:stream';

// An SDK lives in a test-local folder, not next to the scripts, and ESM imports ignore NODE_PATH: `name` is
// resolved by hand from each of `sdkDirs` (its node_modules), then NODE_PATH, then this folder. Calls
// `load(req, main)` with the first that resolves (a throw there counts as not found there) and returns what it
// returns; null with `tried` filled with every place looked in, and why each failed.
export function loadPackage(name, sdkDirs, load, tried) {
  const places = [];
  for (const d of sdkDirs) if (d) places.push(resolve(d, 'node_modules'));
  for (const p of (process.env.NODE_PATH || '').split(':')) if (p) places.push(resolve(p));
  for (const dir of places) {
    try {
      const req = createRequire(join(dir, 'noop.js'));
      return load(req, req.resolve(join(dir, name)));
    } catch (e) {
      tried.push(`${dir} (${e.code || e.message})`);
    }
  }
  try {
    const req = createRequire(import.meta.url);
    return load(req, req.resolve(name));
  } catch (e) {
    tried.push(`next to the scripts (${e.code || e.message})`);
  }
  return null;
}

// A request header as the SDK passed it to fetch: a Headers object or a plain one (names in any case).
export function header(headers, name) {
  if (!headers) return undefined;
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

// A fetch for the SDK (over its own node-fetch) that pushes a record of each attempt onto `attempts`: the fields
// `describe(url, init)` takes from the request, `start` and `headersAt` (`now()`), the status, the response headers
// named in `keep`, `error` when it failed, and an event stream's raw text in `raw` (the SDK reads the same bytes,
// unchanged).
export function recordingFetch(nodeFetch, attempts, now, describe, keep = []) {
  return async (url, init) => {
    const a = { ...describe(url, init), start: now() };
    attempts.push(a);
    let res;
    try {
      res = await nodeFetch(url, init);
    } catch (e) {
      a.error = String(e && e.message);
      throw e;
    }
    a.status = res.status;
    a.headersAt = now();
    if (keep.length > 0) {
      a.headers = {};
      for (const k of keep) if (res.headers.get(k) !== null) a.headers[k] = res.headers.get(k);
    }
    if (!String(res.headers.get('content-type') || '').startsWith('text/event-stream') || !res.body) return res;
    a.raw = '';
    const tap = new Transform({
      transform(chunk, _enc, done) {
        a.raw += chunk.toString('utf8');
        done(null, chunk);
      },
    });
    res.body.on('error', (e) => tap.destroy(e));
    res.body.pipe(tap);
    return new nodeFetch.Response(tap, { status: res.status, statusText: res.statusText, headers: res.headers,
                                         url: res.url });
  };
}
