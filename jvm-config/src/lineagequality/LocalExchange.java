package lineagequality;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataType;

import scala.Tuple2;

/**
 * {@link KeyHashes}' exchange of chunks within one JVM. Where Spark runs in local mode, the map
 * tasks, the reduce tasks and the driver share one heap, so the chunks can go from one to the
 * other as they are, instead of being serialized, compressed, written to disk and read back by a
 * shuffle (about a third of a composite key's pass, measured on 10M rows). Each map task hands
 * over its chunks, per target partition, once it has read all its input (a retried task
 * replaces what an earlier attempt handed over); then each reduce task takes its partition's
 * chunks from every map task. The counts are those of the shuffle: the same chunks reach the
 * same partition's count.
 *
 * <p>The chunks wait in the heap between the two jobs, so the exchange is bounded: all exchanges
 * of the JVM together hold at most {@link #budget} bytes, and a pass whose expected size does not
 * fit is not tried. A map task that would pass the bound gives the exchange up. Either way the
 * chunks then go through files ({@link ChunkFiles}: written and read back as arrays, without
 * the shuffle's serializer, compression and sort). A map task that finds no exchange open (a
 * task cancelled after its pass ended, or tasks that loaded a copy of this class of their own)
 * stores nothing: the caller then shuffles as usual. The reduce tasks' working sets come on top,
 * as with a shuffle.
 */
final class LocalExchange {
  private LocalExchange() {}

  private static final ConcurrentHashMap<Long, Exchange> OPEN = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT = new AtomicLong();
  private static final AtomicLong HELD = new AtomicLong(); // bytes of every open exchange
  private static final AtomicLong USED = new AtomicLong();
  private static final AtomicLong DECLINED = new AtomicLong();
  private static final AtomicLong GIVEN_UP = new AtomicLong();
  // bytes per chunk beside its arrays (object headers, references)
  private static final long CHUNK_OVERHEAD = 96;
  // a map task reserves its bytes in steps of this, so the bound holds while it runs
  private static final long STEP = 1 << 20;

  /**
   * The bytes all exchanges of this JVM may hold at once: half of what Spark's memory manager
   * leaves to user code (1 - spark.memory.fraction of the heap past its 300 MiB reserve; the
   * fused scan beside the pass may take the rest), at most a quarter of the heap. 554 MiB of a
   * 3 GiB heap.
   */
  static long budget() {
    long heap = Runtime.getRuntime().maxMemory();
    double fraction = 0.6;
    org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
    if (env != null) {
      fraction = env.conf().getDouble("spark.memory.fraction", 0.6);
    }
    long user = (long) ((1 - fraction) * Math.max(0, heap - (300L << 20)) / 2);
    return Math.min(heap / 4, user);
  }

  /** {in memory, declined, given up, bytes held, through files, bytes written to files}. */
  static long[] counts() {
    long[] files = ChunkFiles.counts();
    return new long[] {USED.get(), DECLINED.get(), GIVEN_UP.get(), HELD.get(), files[0], files[1]};
  }

  /** A key part's bytes in a chunk: 8 for a fixed-width type, else about its default size. */
  static int width(DataType type) {
    return UnsafeRow.isFixedLength(type) ? 8 : type.defaultSize() + 1;
  }

  /**
   * About the heap bytes of one row's chunks: per hash column c a hash and a key's end (12
   * bytes) and its key's keyWidth[c] bytes (-1: none travels; -2: a slot almost always empty,
   * a bigint's values past the hash bits); an integer key in `bitmapped` about 4 (dense ids are
   * bits of a bitmap; sparse ones travel as values, and a pass that then passes its bound gives
   * up on the way).
   */
  static long perRow(int[] keyWidth, long bitmapped) {
    long bytes = 0;
    for (int c = 0; c < keyWidth.length; c++) {
      if (keyWidth[c] == -2) {
        continue;
      }
      bytes += (bitmapped >>> c & 1) != 0 ? 4 : 12 + Math.max(0, keyWidth[c]);
    }
    return bytes;
  }

  private static final class Exchange {
    final AtomicReferenceArray<List<KeyChunks.Chunk>[]> byMap;
    final int partitions;
    final long limit;
    final AtomicLong held = new AtomicLong();
    volatile boolean overflowed;
    private boolean closed; // guarded by this: nothing is reserved or freed once closed

    Exchange(int maps, int partitions, long limit) {
      this.byMap = new AtomicReferenceArray<>(maps);
      this.partitions = partitions;
      this.limit = limit;
    }

    /** Reserves `bytes`; false (and the exchange given up) past this one's or the JVM's bound. */
    synchronized boolean reserve(long bytes) {
      if (closed || overflowed) {
        return false;
      }
      if (held.addAndGet(bytes) > limit | HELD.addAndGet(bytes) > budget()) {
        overflowed = true;
        return false;
      }
      return true;
    }

    synchronized void free(long bytes) {
      if (!closed) {
        held.addAndGet(-bytes);
        HELD.addAndGet(-bytes);
      }
    }

    /** A map task's chunks, replacing an earlier attempt's; false once closed. */
    synchronized List<KeyChunks.Chunk>[] store(int map, List<KeyChunks.Chunk>[] chunks) {
      return closed ? null : byMap.getAndSet(map, chunks);
    }

    synchronized boolean isClosed() {
      return closed;
    }

    synchronized void close() {
      closed = true;
      HELD.addAndGet(-held.getAndSet(0));
    }
  }

  static long size(KeyChunks.Chunk c) {
    long size = CHUNK_OVERHEAD + 8L * c.hashes.length;
    size += c.ends == null ? 0 : 4L * c.ends.length;
    size += c.bytes == null ? 0 : c.bytes.length;
    size += c.words == null ? 0 : 8L * c.words.length;
    size += c.set == null ? 0 : 8L * c.set.length;
    return size;
  }

  /**
   * The chunks of `chunks` delivered to `n` partitions in the heap, each partition's handed to
   * `reduce`, and the results collected; where they do not fit (the `expected` bytes, 0:
   * unknown, or the map tasks' chunks on the way), through files ({@link ChunkFiles}, the map
   * side run again when given up on the way). Null, and nothing left held, where neither can be:
   * Spark is not in local mode, or `localBudget` is 0 (off). -1: the JVM's {@link #budget},
   * then files; -2: that budget, no files (past it the caller shuffles); 1: files at once (both
   * to compare timings); above 1: at most that many bytes, then files; below -2: at most
   * -localBudget bytes, no files (both for tests).
   */
  static <T> List<T> exchange(
      JavaPairRDD<Integer, KeyChunks.Chunk> chunks,
      int n,
      long expected,
      long localBudget,
      ReduceFn<T> reduce) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(chunks.context());
    if (localBudget == 0 || !sc.sc().isLocal()) {
      return null;
    }
    if (localBudget == 1) {
      return ChunkFiles.exchange(chunks, n, reduce);
    }
    boolean files = localBudget == -1 || localBudget > 0;
    long bound = localBudget == -1 || localBudget == -2 ? budget() : Math.abs(localBudget);
    List<T> inMemory = inMemory(chunks, n, expected, Math.min(bound, budget()), reduce);
    if (inMemory != null || !files) {
      return inMemory;
    }
    return ChunkFiles.exchange(chunks, n, reduce);
  }

  /** {@link #exchange} in the heap, with at most `limit` bytes; null where they do not fit. */
  private static <T> List<T> inMemory(
      JavaPairRDD<Integer, KeyChunks.Chunk> chunks,
      int n,
      long expected,
      long limit,
      ReduceFn<T> reduce) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(chunks.context());
    if (expected > limit || expected > budget() - HELD.get()) {
      DECLINED.incrementAndGet();
      return null;
    }
    final long id = NEXT.incrementAndGet();
    final Exchange ex = new Exchange(chunks.getNumPartitions(), n, limit);
    OPEN.put(id, ex);
    try {
      chunks.foreachPartition(
          (Iterator<Tuple2<Integer, KeyChunks.Chunk>> it) -> handOver(id, it));
      boolean complete = !ex.overflowed;
      for (int m = 0; complete && m < ex.byMap.length(); m++) {
        complete = ex.byMap.get(m) != null; // a task that found no exchange stored nothing
      }
      if (!complete) {
        GIVEN_UP.incrementAndGet();
        return null;
      }
      List<T> out = reduceEach(sc, n, p -> reduce.apply(taken(id, p)));
      USED.incrementAndGet();
      return out;
    } finally {
      OPEN.remove(id);
      ex.close();
    }
  }

  /** A reduce task's work on its partition's chunks (serializable, as Spark's functions are). */
  interface ReduceFn<T> extends java.io.Serializable {
    Iterator<T> apply(Iterator<KeyChunks.Chunk> chunks) throws Exception;
  }

  /** What one reduce task gives for its target partition. */
  interface TargetFn<T> extends java.io.Serializable {
    Iterator<T> apply(int target) throws Exception;
  }

  /** One reduce task per target partition 0..n-1 (a job of its own); their results in order. */
  static <T> List<T> reduceEach(JavaSparkContext sc, int n, TargetFn<T> reduce) {
    List<Integer> targets = new ArrayList<>(n);
    for (int p = 0; p < n; p++) {
      targets.add(p);
    }
    return sc.parallelize(targets, n)
        .mapPartitions((Iterator<Integer> ps) -> reduce.apply(ps.next()))
        .collect();
  }

  private static void handOver(long id, Iterator<Tuple2<Integer, KeyChunks.Chunk>> it) {
    Exchange ex = OPEN.get(id);
    if (ex == null) { // closed, or another copy of this class: store nothing (the caller shuffles)
      return;
    }
    @SuppressWarnings("unchecked")
    List<KeyChunks.Chunk>[] mine = new List[ex.partitions];
    long unreserved = 0;
    while (!ex.overflowed && it.hasNext()) {
      Tuple2<Integer, KeyChunks.Chunk> t = it.next();
      List<KeyChunks.Chunk> into = mine[t._1()];
      if (into == null) {
        into = mine[t._1()] = new ArrayList<>();
      }
      into.add(t._2());
      unreserved += size(t._2());
      if (unreserved >= STEP) {
        if (!ex.reserve(unreserved)) {
          return;
        }
        unreserved = 0;
      }
    }
    if (ex.overflowed || !ex.reserve(unreserved)) {
      return;
    }
    List<KeyChunks.Chunk>[] earlier = ex.store(TaskContext.getPartitionId(), mine);
    if (earlier != null) { // a retry: the earlier attempt's chunks are let go
      long freed = 0;
      for (List<KeyChunks.Chunk> l : earlier) {
        for (KeyChunks.Chunk c : l == null ? List.<KeyChunks.Chunk>of() : l) {
          freed += size(c);
        }
      }
      ex.free(freed);
    }
  }

  /**
   * Partition p's chunks from every map task. They stay held until the pass ends: a retried
   * reduce task takes them again.
   */
  private static Iterator<KeyChunks.Chunk> taken(long id, int p) {
    Exchange ex = OPEN.get(id);
    if (ex == null || ex.isClosed()) {
      throw new IllegalStateException("local exchange " + id + " is closed");
    }
    List<KeyChunks.Chunk> out = new ArrayList<>();
    for (int m = 0; m < ex.byMap.length(); m++) {
      List<KeyChunks.Chunk>[] lists = ex.byMap.get(m);
      if (lists[p] != null) {
        out.addAll(lists[p]);
      }
    }
    return out.iterator();
  }
}
