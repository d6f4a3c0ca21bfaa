// atento's HTTP API from the browser: JSON calls and TGI's Server-Sent Events stream.
// The API key lives only in this object (never in storage, cookies or the URL).

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.type = body && body.error_type ? body.error_type : "http";
  }
}

export class ApiClient {
  #key = "";

  setKey(key) {
    this.#key = (key || "").trim();
  }

  #headers(json) {
    const headers = {};
    if (json) headers["Content-Type"] = "application/json";
    if (this.#key) headers.Authorization = `Bearer ${this.#key}`;
    return headers;
  }

  async getJson(path, { signal } = {}) {
    const response = await fetch(path, { headers: this.#headers(false), signal });
    return readJson(response);
  }

  async postJson(path, body, { signal } = {}) {
    const response = await fetch(path, {
      method: "POST",
      headers: this.#headers(true),
      body: JSON.stringify(body),
      signal,
    });
    return readJson(response);
  }

  // Yields each `data:` payload of a POST that answers text/event-stream; an error event throws.
  async *stream(path, body, { signal } = {}) {
    const response = await fetch(path, {
      method: "POST",
      headers: { ...this.#headers(true), Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) await readJson(response); // throws ApiError with the server's message
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let match;
      while ((match = /\r?\n\r?\n/.exec(buffer)) !== null) {
        const event = parseEvent(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
        if (event !== null) yield checked(event);
      }
    }
    const last = parseEvent(buffer);
    if (last !== null) yield checked(last);
  }
}

async function readJson(response) {
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: text || response.statusText, error_type: "http" };
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

function parseEvent(raw) {
  const data = raw
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, "")) // "data:x" and "data: x" are the same event
    .join("\n");
  return data ? JSON.parse(data) : null;
}

function checked(event) {
  if (event && event.error !== undefined && event.token === undefined) throw new ApiError(200, event);
  return event;
}
