// Metrics through OpenTelemetry, with nothing to configure on the queue: a durable queue
// (Redis, Durable Objects) records into whatever MeterProvider the application registered
// with `@opentelemetry/api` (`metrics.setGlobalMeterProvider`, or an SDK's `start()`), and
// into nothing when none is registered or the package is not installed.
//
// The provider is found where @opentelemetry/api keeps it: the API stores its globals under
// `Symbol.for("opentelemetry.js.api.1")` on globalThis so that every copy of API 1.x in a
// process (one per bundle or node_modules tree) sees the same provider. Reading that slot
// instead of importing the package keeps this module free of imports: it loads in every
// runtime and every bundle whether the package is there or not, and costs one property read
// per recorded event when it is not.
//
// What is recorded, each with the attributes `tarry.queue.name` and `tarry.queue.engine`:
//   tarry.queue.lateness      histogram (ms): how late each delivery began after its deadline
//   tarry.queue.delivered, .acked, .nacked, .redelivered, .dead    counters (deliveries)
//   tarry.queue.pending, .in_flight, .dead_letters    gauges, read from stats() at collection
// Instruments are made once per provider, on the first event after it was registered; a
// queue's gauges are observed from then until it is closed.

const API = Symbol.for("opentelemetry.js.api.1");
const METER = "tarry-queue";

/** Lateness buckets (ms): whole ms up to a minute, where the figures people look at live. */
const LATENESS_BOUNDARIES = [0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000];

const COUNTERS = ["delivered", "acked", "nacked", "redelivered", "dead"];

/** The MeterProvider registered with @opentelemetry/api 1.x, or undefined. */
function registered() {
  const api = globalThis[API];
  return api !== undefined && typeof api.version === "string" && api.version.startsWith("1.") ? api.metrics : undefined;
}

/** provider → its instruments (one set per provider, shared by every queue). */
const byProvider = new WeakMap();

/** The queues whose gauges are observed: weak, so a queue that is dropped unclosed goes too. */
const observed = new Set();

function instrumentsOf(provider) {
  let made = byProvider.get(provider);
  if (made !== undefined) return made;
  const meter = provider.getMeter(METER);
  made = {
    lateness: meter.createHistogram("tarry.queue.lateness", {
      unit: "ms",
      description: "How late each delivery began after its deadline",
      advice: { explicitBucketBoundaries: LATENESS_BOUNDARIES },
    }),
    counters: Object.fromEntries(
      COUNTERS.map((name) => [
        name,
        meter.createCounter(`tarry.queue.${name}`, { unit: "{delivery}", description: `Deliveries ${name}` }),
      ]),
    ),
  };
  const gauges = {
    pending: meter.createObservableGauge("tarry.queue.pending", { unit: "{item}", description: "Items waiting" }),
    inFlight: meter.createObservableGauge("tarry.queue.in_flight", {
      unit: "{item}",
      description: "Items handed out, their outcome not yet stored",
    }),
    dead: meter.createObservableGauge("tarry.queue.dead_letters", { unit: "{item}", description: "Dead letters" }),
  };
  const observe = async (result) => {
    const reads = [];
    for (const ref of observed) {
      const meters = ref.deref();
      if (meters === undefined || meters.closed) {
        observed.delete(ref);
        continue;
      }
      reads.push(
        meters.counts().then(
          (c) => {
            result.observe(gauges.pending, c.pending, meters.attributes);
            result.observe(gauges.inFlight, c.inFlight, meters.attributes);
            result.observe(gauges.dead, c.dead, meters.attributes);
          },
          () => {}, // a queue that cannot be read now reports nothing this time
        ),
      );
    }
    await Promise.all(reads);
  };
  meter.addBatchObservableCallback(observe, Object.values(gauges));
  byProvider.set(provider, made);
  return made;
}

/** One queue's metrics. */
export class Meters {
  /** The provider whose instruments `#made` are, or null before the first look. @type {any} */
  #provider = null;
  /** @type {{ lateness: any, counters: Record<string, any> } | null} */
  #made = null;
  /** @type {WeakRef<Meters> | null} */
  #ref = null;
  closed = false;
  attributes;
  /** () => Promise<{ pending, inFlight, dead }> */
  counts;

  /**
   * @param {string} engine "redis" or "durable"
   * @param {string} name the queue's name
   * @param {() => Promise<{ pending: number, inFlight: number, dead: number }>} counts
   */
  constructor(engine, name, counts) {
    this.attributes = Object.freeze({ "tarry.queue.name": name, "tarry.queue.engine": engine });
    this.counts = counts;
  }

  /** Whether a provider is registered (making its instruments, and observing this queue, on first sight). */
  get on() {
    const provider = registered();
    if (provider !== this.#provider) this.#bind(provider);
    return this.#made !== null;
  }

  #bind(provider) {
    this.#provider = provider;
    this.#made = null;
    if (provider === undefined || this.closed) return;
    try {
      this.#made = instrumentsOf(provider);
    } catch {
      return; // a provider that refuses instruments records nothing
    }
    if (this.#ref === null) {
      this.#ref = new WeakRef(this);
      observed.add(this.#ref);
    }
  }

  /** Records an event: a delivery's lateness and count, or another outcome's count. Call only when `on`. */
  record(type, detail) {
    const made = this.#made;
    if (made === null) return;
    if (type === "delivered") made.lateness.record(detail.lateness, this.attributes);
    made.counters[type]?.add(1, this.attributes);
  }

  /** Stops observing this queue's gauges. */
  close() {
    this.closed = true;
    if (this.#ref !== null) observed.delete(this.#ref);
  }
}
