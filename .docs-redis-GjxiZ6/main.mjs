import http from "node:http";
import { metrics } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { RedisDelayQueue } from "tarry-queue/redis";

const exporter = new PrometheusExporter({ preventServerStart: true });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
const server = http.createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));

const queue = new RedisDelayQueue({ redis: process.env.REDIS_URL, name: "orders" });
await queue.offer({ order: 1 }, 0);
const job = await queue.take();
await job.ack();

const text = await (await fetch(`http://127.0.0.1:${server.address().port}/metrics`)).text();
for (const line of text.split("\n")) {
  if (/^tarry_queue_(delivered|acked)_total|^tarry_queue_lateness_count|^tarry_queue_pending/.test(line)) {
    console.log(line);
  }
}
server.close();
await queue.close();
