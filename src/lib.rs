//! # tarry
//!
//! A delay queue: items go in with a delay and come out, in deadline order, once it has
//! expired. The core is plain Rust ([`DelayQueue`], an indexed 4-ary heap with O(log n)
//! cancel and reschedule by [`Handle`], FIFO among equal deadlines, on a monotonic
//! [`Clock`]). Compiled to WebAssembly, the same core backs the npm package `tarry-queue`,
//! where one host timer per queue, re-armed whenever the head changes, replaces the
//! leader thread and condition variable of Java's `DelayQueue`.
//!
//! ```
//! use tarry_queue::DelayQueue;
//! let mut q = DelayQueue::new();
//! let h = q.offer("expire session 7", 30.0 * 60_000.0).unwrap();
//! q.offer("retry job 3", -1.0).unwrap(); // a negative delay: already expired
//! assert_eq!(q.poll(), Some("retry job 3"));
//! assert_eq!(q.cancel(h), Some("expire session 7"));
//! ```

// The package's wasm build (scripts/build.sh: wasm32-unknown-unknown without the `std`
// feature) is `no_std` with `alloc`: its panic handler traps without formatting a message,
// so no formatting machinery is linked into the module every page loads.
#![cfg_attr(all(target_arch = "wasm32", target_os = "unknown", not(feature = "std")), no_std)]

extern crate alloc;

mod chunked;
mod clock;
mod driver;
mod heap;
mod lateness;
mod queue;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

// The wasm-bindgen binding (and the wasm build's allocator under it) is for JS hosts
// (wasm32-unknown-unknown); the WASI component (component/) builds the core alone.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod binding;

#[cfg(not(target_arch = "wasm32"))]
pub use clock::SystemClock;
pub use clock::{Clock, ManualClock};
pub use driver::Driver;
/// The indexed heap under [`DelayQueue`], exported for `benches/native.rs` to compare
/// arities on the real code; not part of the API.
#[doc(hidden)]
pub use heap::Heap;
pub use lateness::Lateness;
pub use queue::{DelayQueue, Expired, Handle, OfferError, Refusal, MAX_ITEMS};
