//! # tarry as a WebAssembly component
//!
//! The core of `tarry_queue` behind the WIT interface `tarry:queue/queue` (`../wit/tarry.wit`),
//! built for `wasm32-wasip2` into a component that any WASI 0.2 host runs: wasmtime embedded
//! in Rust, Python or Go, Spin, wasmCloud, or JS through jco. `scripts/build-component.sh`
//! builds it; `tests/component/` uses it from Python (wasmtime) and from Node (jco).
//!
//! The npm package keeps its wasm-bindgen binding; this crate is a second, separate face
//! over the same core, so neither grows the other.
//!
//! * [`queue`]: what the `delay-queue` resource does, independent of WASI: byte payloads,
//!   refusals as the WIT `error` variant, and the blocking `take` on one pollable.
//! * [`clock`]: the queue's clock and that pollable on `wasi:clocks/monotonic-clock`.
//! * `guest` (wasm32 only): wit-bindgen's export traits, forwarding to [`queue`].

mod bindings {
    wit_bindgen::generate!({ path: "../wit", world: "tarry", additional_derives: [PartialEq] });
}

pub mod clock;
pub mod queue;

#[cfg(target_arch = "wasm32")]
mod guest;

#[cfg(test)]
mod tests;

pub use bindings::exports::tarry::queue::queue::{Error, Item, Stats};
