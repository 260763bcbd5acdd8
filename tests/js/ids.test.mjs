// Generated ids (js/engine/ids.js): 22 base64url characters, each the encoding of 16 bytes of the
// platform's random values, in order, none repeated.
import { test } from "node:test";
import assert from "node:assert/strict";

test("a generated id is the base64url encoding of the next 16 random bytes", async () => {
  const drawn = [];
  const real = globalThis.crypto.getRandomValues;
  globalThis.crypto.getRandomValues = (a) => {
    real.call(globalThis.crypto, a);
    drawn.push(Uint8Array.from(a));
    return a;
  };
  try {
    const { newId } = await import(`../../js/engine/ids.js?fresh=${Date.now()}`);
    const ids = Array.from({ length: 600 }, () => newId()); // more than one pool
    assert.equal(drawn.length, 3);
    const bytes = Buffer.concat(drawn.map((d) => Buffer.from(d)));
    ids.forEach((id, i) => {
      assert.match(id, /^[A-Za-z0-9_-]{22}$/);
      assert.equal(id, bytes.subarray(16 * i, 16 * (i + 1)).toString("base64url"), `id ${i}`);
    });
    assert.equal(new Set(ids).size, ids.length);
  } finally {
    globalThis.crypto.getRandomValues = real;
  }
});
