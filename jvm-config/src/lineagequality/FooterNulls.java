package lineagequality;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

import scala.collection.JavaConverters;

/**
 * Null counts of Parquet columns from the files' footers (see lineage_quality.engine.footer_nulls):
 * for a column that no rule reads but to count its nulls, the scan need not read its pages. Each
 * column chunk's statistics hold its null count, which Spark itself trusts (IsNull filters skip
 * row groups on it). Only where the answer is certainly the scan's: a DataFrame that is exactly a
 * scan of plain Parquet files (no Delta or Iceberg, whose deletes the footers do not show), no
 * corrupt or missing files skipped, top-level primitive columns matched by name as Spark's reader
 * matches them, and every chunk with its null count written. Anything else: null, and the caller
 * counts in the scan.
 */
public final class FooterNulls {
  private FooterNulls() {}

  /** Files read on the driver; more are read by a Spark job, a slice of files per task. */
  static final int DRIVER_FILES = 32;

  /**
   * {rows, nulls of columns[0], nulls of columns[1], ...} of the files `df` scans, or null when
   * the footers cannot answer for the scan. `maxFiles` bounds the footers read (0: no bound);
   * a file whose footer says it is longer than `maxFooterBytes` is left to the scan (a crafted
   * length would have the reader allocate it on the driver).
   */
  public static long[] count(
      Dataset<Row> df, List<String> columns, int maxFiles, int maxFooterBytes) throws IOException {
    LogicalPlan plan = df.queryExecution().analyzed();
    while (plan instanceof SubqueryAlias) { // a catalog table's name: the same rows
      plan = ((SubqueryAlias) plan).child();
    }
    if (!(plan instanceof LogicalRelation) || ((LogicalRelation) plan).isStreaming()) {
      return null;
    }
    if (!(((LogicalRelation) plan).relation() instanceof HadoopFsRelation)) {
      return null;
    }
    final HadoopFsRelation relation = (HadoopFsRelation) ((LogicalRelation) plan).relation();
    // exact classes: a subclass (Delta's file format, a catalog's pruned index) may add meaning
    if (relation.fileFormat().getClass() != ParquetFileFormat.class
        || relation.location().getClass() != InMemoryFileIndex.class) {
      return null;
    }
    final SQLConf conf = df.sparkSession().sessionState().conf();
    if (conf.ignoreCorruptFiles() || conf.ignoreMissingFiles()) {
      return null;
    }
    for (String key : JavaConverters.asJavaCollection(relation.options().keys())) {
      final String k = key.toLowerCase(Locale.ROOT);
      if (k.equals("ignorecorruptfiles") || k.equals("ignoremissingfiles")) {
        return null;
      }
    }
    final List<String> partitions = Arrays.asList(relation.partitionSchema().fieldNames());
    final StructType data = relation.dataSchema();
    for (String column : columns) {
      if (partitions.contains(column) || !Arrays.asList(data.fieldNames()).contains(column)) {
        return null;
      }
      // a field carrying a Parquet field id may be matched by id instead of by name
      if (conf.parquetFieldIdReadEnabled()
          && data.apply(column).metadata().contains("parquet.field.id")) {
        return null;
      }
    }
    final String[] files = relation.location().inputFiles();
    if (maxFiles > 0 && files.length > maxFiles) {
      return null;
    }
    final Configuration hadoop =
        df.sparkSession().sessionState().newHadoopConfWithOptions(relation.options());
    final Reader reader = new Reader(columns, conf.caseSensitiveAnalysis(), maxFooterBytes);
    final List<long[]> parts = new ArrayList<>();
    if (files.length <= DRIVER_FILES) {
      for (String file : files) {
        parts.add(reader.file(hadoop, file));
      }
    } else {
      final SerializableConfiguration shipped = new SerializableConfiguration(hadoop);
      final JavaSparkContext sc =
          JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
      final int slices = Math.min(files.length, 4 * sc.defaultParallelism());
      parts.addAll(
          sc.parallelize(Arrays.asList(files), slices)
              .map(file -> reader.file(shipped.value(), file))
              .collect());
    }
    final long[] total = new long[1 + columns.size()];
    for (long[] part : parts) {
      if (part == null) {
        return null;
      }
      for (int i = 0; i < total.length; i++) {
        total[i] += part[i];
      }
    }
    return total;
  }

  /** {rows, nulls of columns[0], ...} of one file's footer, or null when it cannot answer. */
  public static long[] summarize(
      ParquetMetadata footer, List<String> columns, boolean caseSensitive) {
    return new Reader(columns, caseSensitive, Integer.MAX_VALUE).summarize(footer);
  }

  /** One file's {rows, nulls...}, or null when its footer cannot answer. */
  static final class Reader implements Serializable {
    private static final long serialVersionUID = 1L;
    private final List<String> columns;
    private final boolean caseSensitive;
    private final int maxFooterBytes;

    Reader(List<String> columns, boolean caseSensitive, int maxFooterBytes) {
      this.columns = new ArrayList<>(columns);
      this.caseSensitive = caseSensitive;
      this.maxFooterBytes = maxFooterBytes;
    }

    long[] file(Configuration conf, String file) throws IOException {
      final HadoopInputFile input = HadoopInputFile.fromPath(new Path(file), conf);
      final long length = input.getLength();
      if (length < 12) { // "PAR1", the footer's length, "PAR1": not a Parquet file
        return null;
      }
      final byte[] tail = new byte[8];
      try (SeekableInputStream in = input.newStream()) {
        in.seek(length - 8);
        in.readFully(tail);
      }
      final long footerLength = ByteBuffer.wrap(tail, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      if (footerLength < 0 || footerLength > maxFooterBytes || footerLength > length - 12) {
        return null;
      }
      final ParquetMetadata footer;
      // the options from the configuration at hand: ParquetFileReader.open(input) builds them
      // from a new Hadoop Configuration, which on Parquet 1.16 (Spark 4) parses Hadoop's XML
      // resources again for every file (~0.11 s of driver time per evaluation of 8 files)
      final ParquetReadOptions options = HadoopReadOptions.builder(conf).build();
      try (ParquetFileReader reader = ParquetFileReader.open(input, options)) {
        footer = reader.getFooter();
      }
      return summarize(footer);
    }

    long[] summarize(ParquetMetadata footer) {
      final MessageType schema = footer.getFileMetaData().getSchema();
      final String[] names = new String[columns.size()]; // the file's name of each; null: absent
      for (int i = 0; i < names.length; i++) {
        final String wanted = columns.get(i);
        int found = 0;
        for (Type field : schema.getFields()) {
          final String name = field.getName();
          final boolean same = caseSensitive ? name.equals(wanted) : name.equalsIgnoreCase(wanted);
          if (same) {
            if (!field.isPrimitive()) {
              return null;
            }
            names[i] = field.getName();
            found++;
          }
        }
        if (found > 1) { // Spark's reader refuses an ambiguous name: let the scan say so
          return null;
        }
      }
      final long[] out = new long[1 + names.length];
      for (BlockMetaData block : footer.getBlocks()) {
        final long rows = block.getRowCount();
        out[0] += rows;
        for (int i = 0; i < names.length; i++) {
          if (names[i] == null) { // a column this file lacks reads as null on every row
            out[1 + i] += rows;
            continue;
          }
          final ColumnChunkMetaData chunk = chunkOf(block, names[i]);
          if (chunk == null || chunk.getValueCount() != rows) {
            return null;
          }
          final Statistics<?> stats = chunk.getStatistics();
          if (stats == null || !stats.isNumNullsSet()) {
            return null;
          }
          final long nulls = stats.getNumNulls();
          if (nulls < 0 || nulls > rows) {
            return null;
          }
          out[1 + i] += nulls;
        }
      }
      return out;
    }

    private static ColumnChunkMetaData chunkOf(BlockMetaData block, String name) {
      for (ColumnChunkMetaData chunk : block.getColumns()) {
        final String[] path = chunk.getPath().toArray();
        if (path.length == 1 && path[0].equals(name)) {
          return chunk;
        }
      }
      return null;
    }
  }
}
