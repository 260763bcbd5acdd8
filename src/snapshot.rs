//! Reading a snapshot: the shape check behind `DelayQueue.restore()`.
//!
//! A snapshot is the plain object that `queue.snapshot()` returns:
//!
//! ```text
//! { version: 1, size: 2, items: [ { value: …, deadline: 1767225600000 }, … ] }
//! ```
//!
//! `deadline` is absolute wall-clock time (epoch ms), so a snapshot means the same thing in
//! another process, after a restart. The JS face builds nothing until the whole snapshot
//! has been checked, so a malformed one is refused with one clear error and never becomes
//! a half-built queue. This module checks the envelope through serde-wasm-bindgen: the
//! version (first, so a newer format is named as such), the declared size against the
//! array (a truncated array), and the count against the queue's capacity and what wasm
//! memory can hold (a huge array), all in O(1) without touching the items.
//!
//! The items themselves are checked in JS (js/snapshot.js). Measured here on Node 20 with
//! 2×10⁵ items: reading each `{ value, deadline }` through serde-wasm-bindgen cost 700–900
//! ns per item (four or five boundary crossings each), the same check in JS 10–25 ns.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use wasm_bindgen::prelude::*;

/// The snapshot format this build writes and reads.
pub const VERSION: u32 = 1;

/// The most items a snapshot may hold: the core's slot table and heap take about 32 bytes
/// per item, so this keeps a restore within 1 GiB of wasm memory instead of aborting.
pub const MAX_ITEMS: usize = 1 << 25;

/// Checks a snapshot's envelope; the number of items it holds. Throws a TypeError naming
/// what is wrong, or a RangeError when the items do not fit in `capacity` (negative:
/// unbounded) or in memory.
#[wasm_bindgen(js_name = snapshotSize)]
pub fn snapshot_size(snapshot: JsValue, capacity: f64) -> Result<u32, JsValue> {
    let limit = if capacity < 0.0 { MAX_ITEMS } else { (capacity as usize).min(MAX_ITEMS) };
    LIMIT.with(|l| l.set(limit));
    let parsed: Result<Envelope, _> = serde_wasm_bindgen::from_value(snapshot);
    match parsed {
        Ok(s) if s.items.0 != s.size => Err(js_sys::TypeError::new(&format!(
            "the snapshot is truncated: it says it holds {} items and has {}",
            s.size, s.items.0
        ))
        .into()),
        // At most MAX_ITEMS, so it fits.
        Ok(s) => Ok(s.items.0 as u32),
        Err(e) => {
            let msg = message(&e);
            Err(match msg.strip_prefix(TOO_MANY) {
                Some(rest) => js_sys::RangeError::new(rest).into(),
                None => js_sys::TypeError::new(&msg).into(),
            })
        }
    }
}

thread_local! {
    /// How many items the snapshot being read may hold (serde gives a visitor no context).
    static LIMIT: std::cell::Cell<usize> = const { std::cell::Cell::new(MAX_ITEMS) };
}

/// An error's message without the "Error: " that JS's `String(error)` puts in front.
/// Also names JS values in JS's words where serde-wasm-bindgen uses Rust's.
fn message(e: &impl fmt::Display) -> String {
    let s = e.to_string();
    let mut s = s.strip_prefix("Error: ").map_or_else(|| s.clone(), str::to_owned);
    s = s.replace("invalid type: unit value", "invalid type: null or undefined");
    // An object shows as `JsValue(...)`, its Debug form, which can be long.
    if let (Some(a), Some(b)) = (s.find("JsValue("), s.rfind("), expected")) {
        if a < b {
            s.replace_range(a..b + 1, "an object");
        }
    }
    s
}

/// Marks an error that is about size, not shape, so it becomes a RangeError.
const TOO_MANY: &str = "\u{0}too many:";

#[derive(Deserialize)]
#[serde(expecting = "a tarry snapshot: an object { version, size, items }")]
struct Envelope {
    // Fields are read in this order: a wrong version is reported before anything else.
    #[allow(dead_code)]
    version: Version,
    size: usize,
    items: Count,
}

struct Version;

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "snapshot version {VERSION}")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Version, E> {
                if v == VERSION as f64 {
                    Ok(Version)
                } else {
                    Err(E::custom(format_args!(
                        "unsupported snapshot version {v}: this tarry reads version {VERSION}"
                    )))
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Version, E> {
                self.visit_f64(v as f64)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Version, E> {
                self.visit_f64(v as f64)
            }
        }
        d.deserialize_f64(V)
    }
}

/// The length of the `items` array; its elements are left for JS to read.
struct Count(usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of { value, deadline }")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Count, A::Error> {
                // A JS array's length, known without reading an element.
                let Some(len) = seq.size_hint() else {
                    return Err(de::Error::custom("items must be an array"));
                };
                let limit = LIMIT.with(|l| l.get());
                if len > limit {
                    return Err(de::Error::custom(format_args!(
                        "{TOO_MANY}the snapshot holds {len} items, more than {}",
                        if limit == MAX_ITEMS {
                            format!("tarry restores at once ({MAX_ITEMS})")
                        } else {
                            format!("the queue's capacity ({limit})")
                        }
                    )));
                }
                Ok(Count(len))
            }
        }
        // Not deserialize_seq: that would iterate any iterable (a string, a Set) as a list.
        d.deserialize_any(V)
    }
}
