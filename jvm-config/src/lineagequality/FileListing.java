package lineagequality;

import java.io.IOException;
import java.io.FileNotFoundException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * The data files below a dataset's location on any Hadoop filesystem (s3a, hdfs, abfs, ...), with
 * size and modification time, in one call (see lineage_quality.evaluation.storage): the producer tells the
 * files a run left from those written after its COMPLETE. Iterating a listing through py4j would
 * cost several round trips per file.
 */
public final class FileListing {
    private FileListing() {}

    /**
     * One record per data file: {@code LENGTH:path TAB size TAB modificationMillis NEWLINE}, the
     * path below the location ("/part-0.parquet", "/k=1/part-0.parquet"; "" when the location is
     * the file itself), prefixed by its length in code points (a name may hold a tab or newline). Files
     * and folders Spark's reader skips (a name starting with '.', or with '_' and no '=', or ending
     * in '._COPYING_', which also covers Parquet summary files) are left out. A location that does
     * not exist gives "".
     */
    public static String list(Configuration conf, String location) throws IOException {
        Path root = new Path(location);
        FileSystem fs = root.getFileSystem(conf);
        StringBuilder out = new StringBuilder();
        FileStatus top;
        try {
            top = fs.getFileStatus(root);
        } catch (FileNotFoundException missing) {
            return "";
        }
        if (top.isFile()) {
            append(out, "", top);
            return out.toString();
        }
        String prefix = top.getPath().toString();
        RemoteIterator<LocatedFileStatus> files = fs.listFiles(root, true);
        while (files.hasNext()) {
            LocatedFileStatus file = files.next();
            String path = file.getPath().toString();
            if (!path.startsWith(prefix)) {
                throw new IOException("the listing of " + prefix + " returned " + path + ", outside it");
            }
            String below = path.substring(prefix.length());
            if (!hidden(below)) {
                append(out, below, file);
            }
        }
        return out.toString();
    }

    static boolean hidden(String relative) {
        for (String part : relative.split("/")) {
            if (part.isEmpty()) {
                continue;
            }
            if (part.startsWith(".") || part.endsWith("._COPYING_")) {
                return true;
            }
            if (part.startsWith("_") && !part.contains("=")) {
                return true;
            }
        }
        return false;
    }

    private static void append(StringBuilder out, String path, FileStatus file) {
        out.append(path.codePointCount(0, path.length())).append(':').append(path)
            .append('\t').append(file.getLen())
            .append('\t').append(file.getModificationTime()).append('\n');
    }
}
