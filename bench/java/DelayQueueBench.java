// java.util.concurrent.DelayQueue on the workloads of bench/child.mjs, for the table of
// `npm run bench`. Run by bench/run.mjs as a single-file program:
//
//   java -Xms1g bench/java/DelayQueueBench.java <sizes,comma,separated> <rounds> <churnPending> <churnSteps>
//
// Prints one JSON object: per workload and N, the rate of every measured round (ops/s)
// and, for memory, bytes per pending item. Each size is warmed up (JIT) before its rounds.
//
// Fairness notes. Java's elements must be Delayed objects, so an offer allocates one and
// memory counts it (the JS implementations store a small integer). offer() reads
// System.nanoTime() once per item, as tarry reads performance.now(). remove(Object) is a
// linear scan, so cancel and churn remove a capped number of items and report the rate of
// those (see `cap`); that is the cost Java's users pay, and the point of tarry's handles.

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

public class DelayQueueBench {
    static final long HOUR = TimeUnit.HOURS.toNanos(1);

    static final class Item implements Delayed {
        final long deadline;
        final long seq;
        final int value;

        Item(long deadline, long seq, int value) {
            this.deadline = deadline;
            this.seq = seq;
            this.value = value;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            Item b = (Item) o;
            int c = Long.compare(deadline, b.deadline);
            return c != 0 ? c : Long.compare(seq, b.seq);
        }
    }

    static long seq = 0;

    static long[] delays(int n, long from, long to, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long[] d = new long[n];
        for (int i = 0; i < n; i++) d[i] = from + (long) (r.nextDouble() * (to - from));
        return d;
    }

    /** k distinct indices of 0..n-1 in random order. */
    static int[] sample(int n, int k, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] p = new int[n];
        for (int i = 0; i < n; i++) p[i] = i;
        for (int i = 0; i < k; i++) {
            int j = i + r.nextInt(n - i);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        int[] out = new int[k];
        System.arraycopy(p, 0, out, 0, k);
        return out;
    }

    /** How many remove(Object) calls to time at n pending: about 2·10^8 elements scanned. */
    static int cap(int n, int wanted) {
        return (int) Math.max(100, Math.min(wanted, 200_000_000L / n));
    }

    static double rate(long count, long nanos) {
        return count * 1e9 / nanos;
    }

    /** offer n, then remove(Object) a capped number of random ones. */
    static double[] offerRemove(int n, long[] d, int[] victims) {
        DelayQueue<Item> q = new DelayQueue<>();
        Item[] items = new Item[n];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Item it = new Item(System.nanoTime() + d[i], seq++, i);
            q.offer(it);
            items[i] = it;
        }
        long t1 = System.nanoTime();
        for (int v : victims) {
            if (!q.remove(items[v])) throw new IllegalStateException("remove found nothing");
        }
        long t2 = System.nanoTime();
        if (q.size() != n - victims.length) throw new IllegalStateException("size");
        return new double[] {rate(n, t1 - t0), rate(victims.length, t2 - t1)};
    }

    /** n already-expired items taken with poll(); NaN when the order is wrong. */
    static double drain(int n, long[] past) {
        DelayQueue<Item> q = new DelayQueue<>();
        for (int i = 0; i < n; i++) q.offer(new Item(System.nanoTime() + past[i], seq++, i));
        long t0 = System.nanoTime();
        long last = Long.MIN_VALUE;
        int count = 0;
        boolean ordered = true;
        for (Item it; (it = q.poll()) != null; ) {
            if (it.deadline < last) ordered = false;
            last = it.deadline;
            count++;
        }
        long t1 = System.nanoTime();
        if (count != n) ordered = false;
        return ordered ? rate(n, t1 - t0) : Double.NaN;
    }

    static double churn(int pending, int steps, long seed) {
        DelayQueue<Item> q = new DelayQueue<>();
        long[] d = delays(pending + steps, HOUR, 2 * HOUR, seed);
        SplittableRandom r = new SplittableRandom(seed + 1);
        Item[] live = new Item[pending];
        for (int i = 0; i < pending; i++) {
            live[i] = new Item(System.nanoTime() + d[i], seq++, i);
            q.offer(live[i]);
        }
        long t0 = System.nanoTime();
        for (int k = 0; k < steps; k++) {
            Item it = new Item(System.nanoTime() + d[pending + k], seq++, pending + k);
            q.offer(it);
            int v = r.nextInt(pending);
            if (!q.remove(live[v])) throw new IllegalStateException("remove found nothing");
            live[v] = it;
        }
        long t1 = System.nanoTime();
        return rate(steps, t1 - t0);
    }

    static long usedAfterGc() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
            best = Math.min(best, rt.totalMemory() - rt.freeMemory());
        }
        return best;
    }

    static double memory(int n, long[] d) throws InterruptedException {
        long before = usedAfterGc();
        DelayQueue<Item> q = new DelayQueue<>();
        for (int i = 0; i < n; i++) q.offer(new Item(System.nanoTime() + d[i], seq++, i));
        long after = usedAfterGc();
        if (q.size() != n) throw new IllegalStateException("size");
        return (after - before) / (double) n;
    }

    static String list(List<Double> xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) {
            if (i > 0) b.append(',');
            double x = xs.get(i);
            b.append(Double.isNaN(x) ? "null" : String.format(Locale.ROOT, "%.1f", x));
        }
        return b.append(']').toString();
    }

    /** `"key":{"n1":v1,"n2":v2}` from parallel lists of sizes and JSON values. */
    static String object(String key, List<Integer> sizes, List<String> values) {
        StringBuilder b = new StringBuilder("\"").append(key).append("\":{");
        for (int i = 0; i < sizes.size(); i++) {
            if (i > 0) b.append(',');
            b.append('"').append(sizes.get(i)).append("\":").append(values.get(i));
        }
        return b.append('}').toString();
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[1]);
        int churnPending = Integer.parseInt(args[2]);
        int churnSteps = Integer.parseInt(args[3]);

        List<Integer> sizes = new ArrayList<>();
        List<String> offerJ = new ArrayList<>(), cancelJ = new ArrayList<>(), drainJ = new ArrayList<>();
        List<String> memJ = new ArrayList<>(), countJ = new ArrayList<>();
        for (String arg : args[0].split(",")) {
            int n = Integer.parseInt(arg);
            long[] d = delays(n, HOUR, 2 * HOUR, 1);
            long[] past = delays(n, -2 * HOUR, -HOUR, 2);
            int[] victims = sample(n, cap(n, n / 2), 3);
            double mem = memory(n, d);
            // Warm-up: the JIT compiles offer/remove/poll before the measured rounds.
            int w = Math.min(n, 10_000);
            for (int i = 0; i < 3; i++) {
                offerRemove(w, d, sample(w, cap(w, w / 2), 5));
                drain(w, past);
            }
            List<Double> offer = new ArrayList<>(), cancel = new ArrayList<>(), drain = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                double[] oc = offerRemove(n, d, victims);
                offer.add(oc[0]);
                cancel.add(oc[1]);
                drain.add(drain(n, past));
            }
            sizes.add(n);
            offerJ.add(list(offer));
            cancelJ.add(list(cancel));
            drainJ.add(list(drain));
            memJ.add(String.format(Locale.ROOT, "%.1f", mem));
            countJ.add(Integer.toString(victims.length));
        }

        // Churn: the same shape as the JS one, with the steps capped (remove(Object) is O(n)).
        int steps = Math.min(churnSteps, cap(churnPending, churnSteps) / 2);
        churn(Math.min(churnPending, 10_000), Math.min(steps, 10_000), 10);
        List<Double> churn = new ArrayList<>();
        for (int r = 0; r < rounds; r++) churn.add(churn(churnPending, steps, 20 + r));

        System.out.println("{\"java\":\"" + System.getProperty("java.version") + "\","
                + object("offer", sizes, offerJ) + "," + object("cancel", sizes, cancelJ) + ","
                + object("drain", sizes, drainJ) + "," + object("mem", sizes, memJ) + ","
                + object("cancelCount", sizes, countJ) + ",\"churn\":" + list(churn)
                + ",\"churnSteps\":" + steps + "}");
    }
}
