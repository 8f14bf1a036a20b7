/**
 * The HTTP client against real misbehaving servers on loopback: every failure is one line
 * with the real reason, bounded in time and size, and nothing the server sent reaches the
 * message unescaped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher, fetchBytes, fetchJson, fetchPrefix, HttpError } from '../../src/client/http.js';
import { httpServer, rawServer, type TestServer } from './misbehaving-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The HttpError `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

const fast = { timeoutMs: 5_000, retries: 0, backoffMs: 10 };
/** Nothing a terminal would act on: no control characters, no bidi overrides, no line breaks. */
const PRINTABLE = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$/;

describe('a deadline for the whole exchange', () => {
  it('times out a body trickling one byte at a time although each wait is short', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const timer = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(timer));
    });
    const dispatcher = createDispatcher(fast);
    const started = Date.now();
    const error = await failure(fetchJson(server.url(), dispatcher, { ...fast, deadlineMs: 800 }));
    await dispatcher.close();
    expect(error.code).toBe('CONTENT_API_HTTP_TIMEOUT');
    expect(error.message).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/: timed out: no complete response within the 800 ms deadline, \d+ bytes received$/,
    );
    // Bounded: the deadline, not the per-wait timeout (5 s) or forever; generous for a loaded machine.
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});

describe('a body that breaks mid-way is reported with its real reason', () => {
  it('a Content-Length that lies (the server closes early), retried, then named', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 5000 });
      res.write('{"padding": "xxxxxxxx');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const dispatcher = createDispatcher(fast);
    const error = await failure(fetchJson(server.url(), dispatcher, { ...fast, retries: 2 }));
    await dispatcher.close();
    expect(error.code).toBe('CONTENT_API_HTTP_CONNECTION');
    expect(error.message).toMatch(
      new RegExp(
        /: HTTP 200 body broken after 21 of the 5000 bytes its Content-Length promised: /.source +
          /connection reset$/.source,
      ),
    );
    expect(error.message).not.toMatch(/after retries/);
    expect(server.hits).toBe(3);
  });

  it('a reset in a chunked body, for an image download', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(Buffer.alloc(1000));
      setTimeout(() => res.socket?.resetAndDestroy(), 20);
    });
    const dispatcher = createDispatcher(fast);
    const error = await failure(fetchBytes(server.url('/a.jpg'), dispatcher, fast));
    await dispatcher.close();
    expect(error.message).toMatch(/\/a\.jpg: HTTP 200 body broken after 1000: connection reset( \(ECONNRESET\))?$/);
  });

  it('a body past the size cap stops at the cap, or before reading when Content-Length says so', async () => {
    server = await httpServer((req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(req.url === '/declared' && { 'content-length': 1_000_000 }),
      });
      res.end(`"${'x'.repeat(999_998)}"`);
    });
    const dispatcher = createDispatcher(fast);
    const declared = await failure(fetchJson(server.url('/declared'), dispatcher, { ...fast, maxBytes: 1000 }));
    const chunked = await failure(fetchJson(server.url('/chunked'), dispatcher, { ...fast, maxBytes: 1000 }));
    await dispatcher.close();
    expect(declared.message).toMatch(/\/declared: response larger than 1000 bytes$/);
    expect(chunked.message).toMatch(/\/chunked: response larger than 1000 bytes$/);
  });

  it('a 503 on every try is reported as the 503 and its message, not as "after retries"', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"message": "down for maintenance"}');
    });
    const dispatcher = createDispatcher(fast);
    const error = await failure(fetchJson(server.url(), dispatcher, { ...fast, retries: 2 }));
    await dispatcher.close();
    expect(error.message).toMatch(/: HTTP 503 \(down for maintenance\)$/);
    expect(server.hits).toBe(3);
  });
});

describe('what the server controls is escaped before it is printed', () => {
  it('a body quoted in an error: escape sequences, line breaks and bidi overrides', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('\u001b[2J\u001b]0;owned\u0007 line one\r\nline two \u202eevil\u009b');
    });
    const dispatcher = createDispatcher(fast);
    const error = await failure(fetchJson(server.url(), dispatcher, fast));
    await dispatcher.close();
    expect(error.message).toMatch(PRINTABLE);
    expect(error.message).toContain('HTTP 500 (\\u001b[2J\\u001b]0;owned\\u0007 line one line two \\u202eevil\\u009b)');
  });

  it('a JSON message and a content type with control characters', async () => {
    server = await rawServer((hit) =>
      hit === 1
        ? 'HTTP/1.1 404 Not\u001b[31m Found\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n' +
          '{"message": "gone\\u001b[0m\\nforged line"}'
        : hit === 2
          ? 'HTTP/1.1 200 OK\r\ncontent-type: image/\u001b[1mpng\r\nconnection: close\r\n\r\n{}'
          : Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/\u009b1mplain\r\nconnection: close\r\n\r\n{}', 'latin1'),
    );
    const dispatcher = createDispatcher(fast);
    const json = await failure(fetchJson(server.url('/page'), dispatcher, fast));
    const refused = await failure(fetchJson(server.url('/page'), dispatcher, fast));
    const type = await failure(fetchJson(server.url('/page'), dispatcher, fast));
    await dispatcher.close();
    for (const error of [json, refused, type]) expect(error.message).toMatch(PRINTABLE);
    expect(json.message).toMatch(/\/page: HTTP 404 Not Found \(gone\\u001b\[0m forged line\)$/);
    // undici refuses a control character in a header; an 8-bit one (C1 CSI, as Latin-1) gets through, escaped.
    expect(refused.message).toMatch(
      /\/page: Response does not match the HTTP\/1\.1 protocol \(Invalid header value char\)$/,
    );
    expect(type.message).toMatch(/\/page: content type is text\/\\u009b1mplain, not application\/json$/);
  });

  it('a URL with control characters in it (a page names what is downloaded)', () => {
    const error = new HttpError('CONTENT_API_HTTP_STATUS', 'http://h/\u001b[2J\n', 'HTTP 404 Not Found (x)');
    expect(error.message).toBe('http://h/\\u001b[2J\\n: HTTP 404 Not Found (x)');
  });
});

describe('JSON bodies are UTF-8 and bounded in depth', () => {
  it('refuses invalid UTF-8 and a page nested 200,000 levels deep, each in one line', async () => {
    server = await httpServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        req.url === '/latin1'
          ? Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d])
          : '['.repeat(200_000) + ']'.repeat(200_000),
      );
    });
    const dispatcher = createDispatcher(fast);
    const latin1 = await failure(fetchJson(server.url('/latin1'), dispatcher, fast));
    const deep = await failure(fetchJson(server.url('/deep'), dispatcher, fast));
    await dispatcher.close();
    expect(latin1.message).toMatch(/\/latin1: not UTF-8: byte 0xe9 at offset 6 is not valid UTF-8$/);
    expect(deep.message).toMatch(/\/deep: invalid JSON \(nested deeper than 256 levels \(the limit\) at offset 256\)$/);
  });
});

describe("fetchPrefix: a file's first bytes, for header probes", () => {
  it(
    'asks for a range, reads no further when the server ignores it, ' + 'and reports a broken body in one line',
    async () => {
      const file = Buffer.alloc(1024 * 1024, 7);
      server = await httpServer((req, res) => {
        if (req.url === '/broken') {
          res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': file.length });
          res.write(file.subarray(0, 100));
          return void setTimeout(() => res.socket?.destroy(), 20);
        }
        if (req.url === '/ranged' && req.headers.range === 'bytes=0-4095') {
          res.writeHead(206, {
            'content-type': 'image/jpeg',
            'content-range': `bytes 0-4095/${file.length}`,
            'content-length': 4096,
          });
          return void res.end(file.subarray(0, 4096));
        }
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': file.length });
        res.end(file);
      });
      const dispatcher = createDispatcher(fast);
      const ranged = await fetchPrefix(server.url('/ranged'), dispatcher, 4096, fast);
      const ignored = await fetchPrefix(server.url('/ignored'), dispatcher, 4096, { ...fast, maxBytes: 1000 });
      const broken = await failure(fetchPrefix(server.url('/broken'), dispatcher, 4096, fast));
      await dispatcher.close();
      expect([ranged.status, ranged.body.length]).toEqual([206, 4096]);
      expect([ignored.status, ignored.body.length]).toEqual([200, 4096]);
      expect(broken.message).toMatch(
        new RegExp(
          /\/broken: HTTP 200 body broken after 100 of the 1048576 bytes its Content-Length promised: /.source +
            /connection reset$/.source,
        ),
      );
    },
  );
});

describe("undici's error codes never reach the reader (#22)", () => {
  it('no headers within --timeout: said in words, with the URL and the seconds', async () => {
    server = await httpServer(() => undefined); // takes the request, never answers
    const options = { ...fast, timeoutMs: 300 };
    const dispatcher = createDispatcher(options);
    const error = await failure(fetchJson(server.url('/slow'), dispatcher, options));
    await dispatcher.close();
    expect(error.code).toBe('CONTENT_API_HTTP_TIMEOUT');
    expect(error.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/slow: timed out: no response headers within 0\.3 s/);
    expect(error.message).not.toMatch(/UND_ERR/);
  });

  it('a body that goes silent for --timeout: said in words, with what arrived', async () => {
    server = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': 5000 });
      res.write(Buffer.alloc(100));
    });
    const options = { ...fast, timeoutMs: 300 };
    const dispatcher = createDispatcher(options);
    const error = await failure(fetchBytes(server.url('/a.jpg'), dispatcher, options));
    await dispatcher.close();
    expect(error.message).toMatch(/\/a\.jpg: timed out: the body stopped for 0\.3 s \(--timeout\) after 100 bytes$/);
    expect(error.message).not.toMatch(/UND_ERR/);
  });

  it('a connection closed before any answer: said in words', async () => {
    server = await httpServer((_req, res) => res.socket?.destroy());
    const dispatcher = createDispatcher(fast);
    const error = await failure(fetchJson(server.url('/closed'), dispatcher, fast));
    await dispatcher.close();
    expect(error.message).toMatch(/\/closed: /);
    expect(error.message).not.toMatch(/UND_ERR/);
  });
});
