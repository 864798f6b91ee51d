package lineagequality;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.hadoop.fs.FileStatus;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Value tests of dictionary-encoded Parquet string columns, answered on their dictionaries (see
 * lineage_quality.engine.dictionary_values): a column of country or status codes holds a handful
 * of distinct values whatever its row count, and every row of a dictionary-encoded chunk is an id
 * into its chunk's dictionary.
 *
 * <p>Two passes. `distinct` reads each chunk's dictionary page only and returns the union of the
 * values as a local DataFrame, on which the caller evaluates each rule's own Spark expression
 * (so the answer is Spark's, for every value, by construction). `count` then adds up, per rule,
 * the rows whose value failed: a chunk whose dictionary holds no failing value costs its
 * dictionary page; any other has its ids decoded (integers, no string is built). The scan reads
 * neither column. Only where the answer is certainly the scan's (ParquetFiles), each chunk
 * wholly dictionary-encoded, values valid UTF-8 and the union within bounds; anything else:
 * null (for a column: not served), and the scan tests the values.
 */
public final class DictionaryValues {
  private DictionaryValues() {}

  /** Files read on the driver (by a few threads); more are read by a Spark job. */
  static final int DRIVER_FILES = 32;

  /** Threads reading files on the driver. */
  static final int DRIVER_THREADS = 4;

  /** A chunk larger than this (compressed) is left to the scan: its pages are read whole. */
  static final long MAX_CHUNK_BYTES = 64L * 1024 * 1024;

  /**
   * A column whose dictionary in some chunk holds more than `FEW_VALUES` values and more than 1
   * per `ROWS_PER_VALUE` of the chunk's non-null rows is left to the scan, refused on the page
   * header before any value is decoded: its values repeat too little for one test per value to
   * pay. (An id column at 1M rows, 41,667 values in each 125,000-row chunk, cost `distinct`
   * ~20 ms of decoding and hashing before its union passed `maxValues` anyway.)
   */
  static final int ROWS_PER_VALUE = 4;

  static final int FEW_VALUES = 1024;

  /** What `distinct` found: the served columns, their values and the frame holding them. */
  public static final class Found {
    private final ParquetFiles scanned;
    private final List<String> columns; // served, in the caller's order
    private final int[] served; // their indices in the requested columns
    private final List<byte[][]> values; // per served column: its distinct values
    private final Dataset<Row> frame;
    private final int maxFooterBytes;

    Found(
        ParquetFiles scanned,
        List<String> columns,
        int[] served,
        List<byte[][]> values,
        Dataset<Row> frame,
        int maxFooterBytes) {
      this.scanned = scanned;
      this.columns = columns;
      this.served = served;
      this.values = values;
      this.frame = frame;
      this.maxFooterBytes = maxFooterBytes;
    }

    /**
     * The served columns, each wholly dictionary-encoded in every file, as one line: for each,
     * its index in the requested columns and its number of distinct values (its rows in
     * `frame`), "index:size" separated by commas. One string, one round trip from Python.
     */
    public String layout() {
      final StringBuilder out = new StringBuilder();
      for (int j = 0; j < served.length; j++) {
        out.append(j == 0 ? "" : ",").append(served[j]).append(':').append(values.get(j).length);
      }
      return out.toString();
    }

    /**
     * One row per distinct value: served column j's values in its own column (of the
     * dataset's type and name), null in the others; column 0's first, then column 1's.
     */
    public Dataset<Row> frame() {
      return frame;
    }
  }

  /**
   * The distinct values of those `columns` that are dictionary-encoded in every chunk, or null
   * when the files cannot stand for `df`'s scan or the passes would not pay: fewer than
   * `minFileBytes` of files times the columns served (checked for all `columns` before a file is
   * read, for those found servable after). A column with more than `maxValues` distinct
   * values or `maxBytes` of them is not served.
   */
  public static Found distinct(
      Dataset<Row> df,
      List<String> columns,
      int maxFiles,
      int maxFooterBytes,
      int maxValues,
      long maxBytes,
      long minFileBytes)
      throws Exception {
    final ParquetFiles scanned = ParquetFiles.of(df, columns, maxFiles);
    if (scanned == null || scanned.bytes() * columns.size() < minFileBytes) {
      return null; // small files: the scan reads them faster than the passes' fixed cost
    }
    for (String column : columns) {
      if (!DataTypes.StringType.equals(scanned.data.apply(column).dataType())) {
        return null; // a collated string (Spark 4) compares by its collation, not by bytes
      }
    }
    final DictionaryFile reader =
        new DictionaryFile(
            new ParquetFiles.Names(columns, scanned.caseSensitive),
            maxFooterBytes,
            maxValues,
            null);
    final List<Object> parts = perFile(df, scanned, reader, true);
    final int n = columns.size();
    final List<Map<ByteBuffer, Boolean>> union = new ArrayList<>();
    final long[] bytes = new long[n];
    final boolean[] refused = new boolean[n];
    for (int i = 0; i < n; i++) {
      union.add(new LinkedHashMap<>());
    }
    for (Object part : parts) {
      if (part == null) {
        return null;
      }
      final DictionaryFile.Values file = (DictionaryFile.Values) part;
      for (int i = 0; i < n; i++) {
        if (refused[i] || file.values[i] == null) {
          refused[i] = refused[i] || file.values[i] == null;
          continue;
        }
        for (byte[] value : file.values[i]) {
          if (union.get(i).putIfAbsent(ByteBuffer.wrap(value), Boolean.TRUE) == null) {
            bytes[i] += value.length;
          }
        }
        refused[i] = union.get(i).size() > maxValues || bytes[i] > maxBytes;
      }
    }
    final List<String> served = new ArrayList<>();
    final List<Integer> indices = new ArrayList<>();
    final List<byte[][]> values = new ArrayList<>();
    final List<StructField> fields = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      final byte[][] found = new byte[union.get(i).size()][];
      int k = 0;
      for (ByteBuffer value : union.get(i).keySet()) {
        found[k++] = value.array();
      }
      if (refused[i] || !allUtf8(found)) { // a Java String cannot carry other bytes exactly
        continue;
      }
      served.add(columns.get(i));
      indices.add(i);
      values.add(found);
      fields.add(DataTypes.createStructField(columns.get(i), DataTypes.StringType, true));
    }
    if (scanned.bytes() * served.size() < minFileBytes) {
      return null; // e.g. one column of values repeating, beside an id column stored plain
    }
    final List<Row> rowsOfFrame = new ArrayList<>();
    for (int j = 0; j < values.size(); j++) {
      for (byte[] value : values.get(j)) {
        final Object[] row = new Object[values.size()];
        row[j] = new String(value, StandardCharsets.UTF_8);
        rowsOfFrame.add(RowFactory.create(row));
      }
    }
    final Dataset<Row> frame =
        df.sparkSession().createDataFrame(rowsOfFrame, DataTypes.createStructType(fields));
    final int[] positions = indices.stream().mapToInt(Integer::intValue).toArray();
    return new Found(scanned, served, positions, values, frame, maxFooterBytes);
  }

  /**
   * The rules' predicates on the distinct values (`selected`: their projection of {@link
   * Found#frame}) as Spark's optimizer has already evaluated them: it folds a projection of a
   * local relation into a local relation of its results (ConvertToLocalRelation), the rows a
   * `collect` then returns, so they are read here without planning and running the query or
   * sending the rows to Python (~4 ms of the ~20 the dictionaries take at 1M rows). Per row,
   * its values in order, one character each: '1' true, '0' false, 'n' null. Null where the
   * optimized plan is anything else (the rule switched off, a predicate it cannot evaluate): the
   * caller collects.
   */
  public static String answers(Dataset<Row> selected) {
    final LogicalPlan plan = selected.queryExecution().optimizedPlan();
    if (!(plan instanceof LocalRelation)) {
      return null;
    }
    final LocalRelation local = (LocalRelation) plan;
    final int width = local.output().size();
    for (int k = 0; k < width; k++) {
      if (!DataTypes.BooleanType.equals(local.output().apply(k).dataType())) {
        return null;
      }
    }
    final StringBuilder out = new StringBuilder();
    final scala.collection.Iterator<InternalRow> rows = local.data().iterator();
    while (rows.hasNext()) {
      final InternalRow row = rows.next();
      for (int k = 0; k < width; k++) {
        out.append(row.isNullAt(k) ? 'n' : row.getBoolean(k) ? '1' : '0');
      }
    }
    return out.toString();
  }

  /**
   * "rows,failing rows of each metric...,nulls of each served column..." of the files `found` read,
   * or null when they no longer answer as they did (a file replaced since: a value or an
   * encoding `distinct` did not see). `tests` holds one item per metric, separated by "/":
   * "column:value,value,..." where column is the metric's served column (its position in
   * `layout`) and the values are the indices of that column's values that fail the metric.
   */
  public static String count(Dataset<Row> df, Found found, String tests) throws Exception {
    final String[] items = tests.isEmpty() ? new String[0] : tests.split("/", -1);
    final int metrics = items.length;
    final int[] columnOf = new int[metrics];
    final List<boolean[]> fails = new ArrayList<>();
    for (int m = 0; m < metrics; m++) {
      final String[] parts = items[m].split(":", -1);
      columnOf[m] = Integer.parseInt(parts[0]);
      final boolean[] f = new boolean[found.values.get(columnOf[m]).length];
      if (!parts[1].isEmpty()) {
        for (String index : parts[1].split(",", -1)) {
          f[Integer.parseInt(index)] = true;
        }
      }
      fails.add(f);
    }
    final DictionaryFile reader =
        new DictionaryFile(
            new ParquetFiles.Names(found.columns, found.scanned.caseSensitive),
            found.maxFooterBytes,
            Integer.MAX_VALUE,
            new DictionaryFile.Tests(found.values, columnOf, fails));
    final List<Object> parts = perFile(df, found.scanned, reader, false);
    final long[] total = new long[1 + metrics + found.columns.size()];
    for (Object part : parts) {
      if (part == null) {
        return null;
      }
      final long[] counted = (long[]) part;
      for (int i = 0; i < total.length; i++) {
        total[i] += counted[i];
      }
    }
    final StringBuilder out = new StringBuilder(); // one round trip to Python
    for (int i = 0; i < total.length; i++) {
      out.append(i == 0 ? "" : ",").append(total[i]);
    }
    return out.toString();
  }

  private static boolean allUtf8(byte[][] values) {
    for (byte[] value : values) {
      try {
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(value));
      } catch (CharacterCodingException e) {
        return false;
      }
    }
    return true;
  }

  /** Each file's answer (null where it has none), read by a few threads or a Spark job. */
  private static List<Object> perFile(
      Dataset<Row> df, ParquetFiles scanned, DictionaryFile reader, boolean dictionaries)
      throws Exception {
    final FileStatus[] files = scanned.files;
    if (files.length > DRIVER_FILES) {
      final SerializableConfiguration shipped = new SerializableConfiguration(scanned.hadoop);
      final JavaSparkContext sc =
          JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
      final int slices = Math.min(files.length, 4 * sc.defaultParallelism());
      return sc.parallelize(Arrays.asList(files), slices)
          .map(file -> reader.fileInTask(shipped.value(), file, dictionaries))
          .collect();
    }
    // a few threads: each holds a chunk's pages, on the driver
    final int cores = Runtime.getRuntime().availableProcessors();
    final int threads = Math.max(1, Math.min(files.length, Math.min(cores, DRIVER_THREADS)));
    final ClassLoader loader = Thread.currentThread().getContextClassLoader();
    final ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            task -> {
              final Thread thread = new Thread(task, "lineage-quality-dictionaries");
              thread.setDaemon(true);
              thread.setContextClassLoader(loader); // a file system from the application's jars
              return thread;
            });
    try {
      final List<Future<Object>> pending = new ArrayList<>();
      for (FileStatus file : files) {
        pending.add(pool.submit(() -> reader.file(scanned.hadoop, file, dictionaries)));
      }
      final List<Object> out = new ArrayList<>();
      for (Future<Object> one : pending) {
        try {
          out.add(one.get());
        } catch (ExecutionException e) {
          throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }
}
