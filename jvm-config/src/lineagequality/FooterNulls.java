package lineagequality;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.schema.Type;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.util.SerializableConfiguration;

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
    final ParquetFiles scanned = ParquetFiles.of(df, columns, maxFiles);
    if (scanned == null) {
      return null;
    }
    final FileStatus[] files = scanned.files;
    final Configuration hadoop = scanned.hadoop;
    final Reader reader = new Reader(columns, scanned.caseSensitive, maxFooterBytes);
    final List<long[]> parts = new ArrayList<>();
    if (files.length <= DRIVER_FILES) {
      for (FileStatus file : files) {
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
    private final ParquetFiles.Names names;
    private final int maxFooterBytes;

    Reader(List<String> columns, boolean caseSensitive, int maxFooterBytes) {
      this.names = new ParquetFiles.Names(columns, caseSensitive);
      this.maxFooterBytes = maxFooterBytes;
    }

    long[] file(Configuration conf, FileStatus file) throws IOException {
      final ParquetMetadata footer;
      try (ParquetFileReader reader = ParquetFiles.open(conf, file, maxFooterBytes)) {
        if (reader == null) {
          return null;
        }
        footer = reader.getFooter();
      }
      return summarize(footer);
    }

    long[] summarize(ParquetMetadata footer) {
      final Type[] fields = names.fields(footer.getFileMetaData().getSchema());
      if (fields == null) {
        return null;
      }
      final long[] out = new long[1 + fields.length];
      for (BlockMetaData block : footer.getBlocks()) {
        final long rows = block.getRowCount();
        out[0] += rows;
        for (int i = 0; i < fields.length; i++) {
          if (fields[i] == null) { // a column this file lacks reads as null on every row
            out[1 + i] += rows;
            continue;
          }
          final ColumnChunkMetaData chunk = ParquetFiles.chunkOf(block, fields[i].getName());
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
  }
}
