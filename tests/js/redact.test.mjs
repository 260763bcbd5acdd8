// The one redaction of credentials in URLs (js/engine/redact.js), which every message the package
// makes goes through.
import assert from "node:assert/strict";
import { test } from "node:test";
import { redact, redactError } from "../../js/engine/redact.js";

test("a URL's password is masked, its user name and host kept", () => {
  assert.equal(
    redact("no connection to redis://:S3cret@127.0.0.1:6379 within 5000 ms"),
    "no connection to redis://:***@127.0.0.1:6379 within 5000 ms",
  );
  assert.equal(redact("rediss://app:S3cret@cache.example:6380/2"), "rediss://app:***@cache.example:6380/2");
  assert.equal(
    redact("postgres://orders:p%40ss@db/orders?sslmode=require"),
    "postgres://orders:***@db/orders?sslmode=require",
  );
  assert.equal(redact("postgresql://u:@db"), "postgresql://u:***@db");
});

test("a userinfo without a colon is masked whole (a client may read it as the password)", () => {
  assert.equal(redact("redis://S3cret@127.0.0.1:6379"), "redis://***@127.0.0.1:6379");
});

test("every URL of a text is masked; text without credentials is unchanged", () => {
  assert.equal(redact("a redis://:x@h1 b redis://:y@h2"), "a redis://:***@h1 b redis://:***@h2");
  for (const plain of ["redis://127.0.0.1:6379", "mail me@example.com", "", "@", "redis://h/0?x=a@b"]) {
    assert.equal(redact(plain), plain);
  }
  assert.equal(redact(undefined), undefined);
});

test("a long hostile text is redacted in linear time", () => {
  const text = `redis://${":".repeat(1e5)}${"a".repeat(1e5)}`;
  const t0 = performance.now();
  redact(`${text}@`);
  redact(text);
  assert.ok(performance.now() - t0 < 2000);
});

test("redactError masks an error's message and stack in place", () => {
  const e = new Error("connect ECONNREFUSED redis://:S3cret@127.0.0.1:1");
  assert.equal(redactError(e), e);
  assert.equal(e.message, "connect ECONNREFUSED redis://:***@127.0.0.1:1");
  assert.ok(!e.stack.includes("S3cret"));
  assert.equal(redactError("text"), "text");
});
