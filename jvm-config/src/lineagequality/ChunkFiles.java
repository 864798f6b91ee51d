package lineagequality;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Stream;

import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;

import scala.Tuple2;

/**
 * {@link LocalExchange}'s way past its bound: where Spark runs in local mode, the map tasks
 * write their chunks to files of their own, as the arrays they are, and each reduce task reads
 * its partition's parts of every file back. A shuffle of the same chunks serializes each as an
 * object, compresses it, and sorts its spill files: on 10M rows of RU, 1.78x floor (a) shuffled
 * against 1.31x in memory. The counts are those of the shuffle: the same chunks reach the same
 * partition's count. A map task writes one file, its chunks staged per target partition and
 * appended in runs of {@link #RUN} bytes (a retried task writes another and the earlier one is
 * let go); the files live in a folder of this pass under Spark's first local folder, deleted
 * when the pass ends, whatever its end. A map task that finds no exchange open (a task
 * cancelled after its pass ended, a copy of this class of its own) writes nothing, and the caller
 * shuffles.
 */
final class ChunkFiles {
  private ChunkFiles() {}

  private static final ConcurrentHashMap<Long, Spill> OPEN = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT = new AtomicLong();
  private static final AtomicLong USED = new AtomicLong();
  private static final AtomicLong WRITTEN = new AtomicLong();
  // a partition's chunks are appended to the file in runs of about this many bytes
  static final int RUN = 256 << 10;

  /** {passes exchanged through files, bytes they wrote}. */
  static long[] counts() {
    return new long[] {USED.get(), WRITTEN.get()};
  }

  /** One map task's file: per target partition, its runs' offsets and lengths. */
  private static final class Output {
    final Path file;
    final long[][] runs; // per partition: offset, length, offset, length, ...
    final int[] filled;

    Output(Path file, int partitions) {
      this.file = file;
      this.runs = new long[partitions][];
      this.filled = new int[partitions];
    }

    void add(int p, long offset, long length) {
      if (runs[p] == null) {
        runs[p] = new long[8];
      } else if (filled[p] + 2 > runs[p].length) {
        runs[p] = Arrays.copyOf(runs[p], 2 * runs[p].length);
      }
      runs[p][filled[p]++] = offset;
      runs[p][filled[p]++] = length;
    }
  }

  private static final class Spill {
    final Path dir;
    final int partitions;
    final AtomicReferenceArray<Output> byMap;

    Spill(Path dir, int maps, int partitions) {
      this.dir = dir;
      this.partitions = partitions;
      this.byMap = new AtomicReferenceArray<>(maps);
    }
  }

  /**
   * The chunks of `chunks` delivered to `n` partitions through files, each partition's handed
   * to `reduce`, and the results collected; null where Spark is not in local mode, or where a
   * map task wrote nothing (the caller shuffles). The files are deleted before this returns.
   */
  static <T> List<T> exchange(
      JavaPairRDD<Integer, KeyChunks.Chunk> chunks, int n, LocalExchange.ReduceFn<T> reduce) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(chunks.context());
    if (!sc.sc().isLocal()) {
      return null;
    }
    final long id = NEXT.incrementAndGet();
    Path dir;
    try {
      dir = Files.createTempDirectory(root(sc), "lq-key-chunks-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    final Spill spill = new Spill(dir, chunks.getNumPartitions(), n);
    OPEN.put(id, spill);
    try {
      chunks.foreachPartition((Iterator<Tuple2<Integer, KeyChunks.Chunk>> it) -> write(id, it));
      for (int m = 0; m < spill.byMap.length(); m++) {
        if (spill.byMap.get(m) == null) { // a task that found no exchange wrote nothing
          return null;
        }
      }
      List<T> out = LocalExchange.reduceEach(sc, n, p -> reduce.apply(read(id, p)));
      USED.incrementAndGet();
      return out;
    } finally {
      OPEN.remove(id);
      delete(dir);
    }
  }

  private static Path root(JavaSparkContext sc) {
    String dirs = sc.getConf().get("spark.local.dir", System.getProperty("java.io.tmpdir"));
    return Paths.get(dirs.split(",")[0].trim());
  }

  private static void delete(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // nothing more to do: Spark's local folder is emptied when the application ends
    }
  }

  private static void write(long id, Iterator<Tuple2<Integer, KeyChunks.Chunk>> it)
      throws IOException {
    Spill spill = OPEN.get(id);
    if (spill == null) { // ended, or another copy of this class: write nothing (the caller shuffles)
      return;
    }
    TaskContext task = TaskContext.get();
    int map = task.partitionId();
    Path file = spill.dir.resolve("map-" + map + "-" + task.taskAttemptId());
    Output out = new Output(file, spill.partitions);
    try {
      written(spill, map, out, it);
    } finally {
      if (OPEN.get(id) != spill) { // the pass ended meanwhile (failed): nothing of it may stay
        Files.deleteIfExists(file);
        delete(spill.dir);
      }
    }
  }

  private static void written(
      Spill spill, int map, Output out, Iterator<Tuple2<Integer, KeyChunks.Chunk>> it)
      throws IOException {
    Path file = out.file;
    ByteBuffer[] staged = new ByteBuffer[spill.partitions];
    long written = 0;
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      while (it.hasNext()) {
        Tuple2<Integer, KeyChunks.Chunk> t = it.next();
        int p = t._1();
        int size = size(t._2());
        ByteBuffer b = staged[p];
        if (b != null && b.position() > 0 && b.remaining() < size) {
          written = flush(ch, b, out, p, written);
        }
        if (b == null) {
          b = staged[p] = buffer(Math.max(RUN, size));
        } else if (b.capacity() < size) { // a chunk past a run: a buffer of its own size
          b = staged[p] = buffer(size);
        }
        encode(t._2(), b);
      }
      for (int p = 0; p < staged.length; p++) {
        if (staged[p] != null && staged[p].position() > 0) {
          written = flush(ch, staged[p], out, p, written);
        }
      }
    }
    WRITTEN.addAndGet(written);
    Output earlier = spill.byMap.getAndSet(map, out);
    if (earlier != null) { // a retry: the earlier attempt's file is let go
      Files.deleteIfExists(earlier.file);
    }
  }

  private static ByteBuffer buffer(int size) {
    return ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
  }

  private static long flush(FileChannel ch, ByteBuffer b, Output out, int p, long at)
      throws IOException {
    b.flip();
    int length = b.remaining();
    while (b.hasRemaining()) {
      ch.write(b);
    }
    b.clear();
    out.add(p, at, length);
    return at + length;
  }

  /** Partition p's chunks from every map task's file, read run by run as they are taken. */
  private static Iterator<KeyChunks.Chunk> read(long id, int p) throws IOException {
    Spill spill = OPEN.get(id);
    if (spill == null) {
      throw new IllegalStateException("chunk files " + id + " are deleted");
    }
    List<KeyChunks.Chunk> out = new ArrayList<>();
    for (int m = 0; m < spill.byMap.length(); m++) {
      Output o = spill.byMap.get(m);
      if (o.runs[p] == null) {
        continue;
      }
      try (FileChannel ch = FileChannel.open(o.file, StandardOpenOption.READ)) {
        for (int r = 0; r < o.filled[p]; r += 2) {
          ByteBuffer b = buffer((int) o.runs[p][r + 1]);
          long at = o.runs[p][r];
          while (b.hasRemaining()) {
            if (ch.read(b, at + b.position()) < 0) {
              throw new IOException("chunk file " + o.file + " ends early");
            }
          }
          b.flip();
          while (b.hasRemaining()) {
            out.add(decode(b));
          }
        }
      }
    }
    return out.iterator();
  }

  /** A chunk's bytes in a file: a header of 4 ints and a long, then its arrays. */
  static int size(KeyChunks.Chunk c) {
    long size = 4 * 4 + 8 + 8L * c.hashes.length;
    size += c.ends == null ? 0 : 4L * c.ends.length;
    size += c.bytes == null ? 0 : c.bytes.length;
    size += c.words == null ? 0 : 8L * c.words.length;
    size += c.set == null ? 0 : 8L * c.set.length;
    return Math.toIntExact(size);
  }

  static void encode(KeyChunks.Chunk c, ByteBuffer b) {
    b.putInt(c.hashes.length);
    b.putInt(c.ends == null ? -1 : c.bytes.length); // ends, one per hash, come with bytes
    b.putInt(c.words == null ? -1 : c.words.length);
    b.putInt(c.set == null ? -1 : c.set.length);
    b.putLong(c.read);
    longs(b, c.hashes);
    if (c.ends != null) {
      b.asIntBuffer().put(c.ends);
      b.position(b.position() + 4 * c.ends.length);
      b.put(c.bytes);
    }
    if (c.words != null) {
      longs(b, c.words);
    }
    if (c.set != null) {
      longs(b, c.set);
    }
  }

  private static void longs(ByteBuffer b, long[] values) {
    b.asLongBuffer().put(values);
    b.position(b.position() + 8 * values.length);
  }

  static KeyChunks.Chunk decode(ByteBuffer b) {
    int hashes = b.getInt();
    int bytes = b.getInt();
    int words = b.getInt();
    int set = b.getInt();
    long read = b.getLong();
    long[] h = longs(b, hashes);
    int[] ends = null;
    byte[] keys = null;
    if (bytes >= 0) {
      ends = new int[hashes];
      b.asIntBuffer().get(ends);
      b.position(b.position() + 4 * hashes);
      keys = new byte[bytes];
      b.get(keys);
    }
    return new KeyChunks.Chunk(
        h, ends, keys, words < 0 ? null : longs(b, words), read, set < 0 ? null : longs(b, set));
  }

  private static long[] longs(ByteBuffer b, int n) {
    long[] out = new long[n];
    b.asLongBuffer().get(out);
    b.position(b.position() + 8 * n);
    return out;
  }
}
