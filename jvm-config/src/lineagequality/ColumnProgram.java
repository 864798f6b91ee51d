package lineagequality;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;

import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * Builds the columns of a program (lineage_quality.engine.expressions) in the JVM: the calls a
 * tree of PySpark Column operations would make, one py4j round trip for the whole tree instead
 * of one per function and operator. Each node calls a method of `functions`, a method of its
 * first argument (a Column), or a static method of one of the engine's helpers, with the same
 * arguments PySpark would pass, so the columns are the ones PySpark builds.
 *
 * <p>A program: {"nodes": [[kind, name, [arg, ...]], ...], "out": [node, ...], "names": [...]}.
 * kind: "f" functions.name, "m" args[0].name(rest), "h" Helper.method. An argument is [tag,
 * value]: "n" an earlier node, "i" int, "l" long, "d" double (Python's repr), "D" decimal, "s"
 * string, "b" boolean, "y" base64 bytes, "z" null, "L" a list of arguments.
 */
public final class ColumnProgram {
  private ColumnProgram() {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> HELPERS =
      Arrays.asList("RegexDfa", "ValueCodes", "RowGates", "ColumnStats");
  private static final Map<String, Method> RESOLVED = new ConcurrentHashMap<>();
  private static final Object EMPTY_SEQ = seq(new ArrayList<Object>());

  /** The program's single output. */
  public static Column column(String program) throws Exception {
    Column[] out = build(program).out;
    if (out.length != 1) {
      throw new IllegalArgumentException("expected one output, got " + out.length);
    }
    return out[0];
  }

  /** `df.agg(outputs...)`. */
  public static Dataset<Row> agg(Dataset<Row> df, String program) throws Exception {
    Column[] out = build(program).out;
    if (out.length == 0) {
      throw new IllegalArgumentException("an aggregation needs at least one column");
    }
    return df.agg(out[0], Arrays.copyOfRange(out, 1, out.length));
  }

  /** `df.withColumns(names, outputs)`. */
  public static Dataset<Row> withColumns(Dataset<Row> df, String program) throws Exception {
    Built built = build(program);
    if (built.names.size() != built.out.length) {
      throw new IllegalArgumentException("one name per output column expected");
    }
    // The Seq overload keeps the order (Spark 4's java.util.Map overload loses it past four
    // columns); seq() makes an immutable List, which both Scala versions' Seq parameters take.
    return df.withColumns(seq(built.names), seq(Arrays.asList(built.out)));
  }

  private static final class Built {
    final Column[] out;
    final List<String> names;

    Built(Column[] out, List<String> names) {
      this.out = out;
      this.names = names;
    }
  }

  private static Built build(String program) throws Exception {
    JsonNode root = JSON.readTree(program);
    JsonNode nodes = root.get("nodes");
    Object[] built = new Object[nodes.size()];
    for (int i = 0; i < nodes.size(); i++) {
      JsonNode node = nodes.get(i);
      Object[] args = arguments(node.get(2), built, i);
      built[i] = call(node.get(0).asText(), node.get(1).asText(), args);
    }
    JsonNode outs = root.get("out");
    Column[] out = new Column[outs.size()];
    for (int i = 0; i < outs.size(); i++) {
      out[i] = (Column) built[outs.get(i).asInt()];
    }
    List<String> names = new ArrayList<>();
    JsonNode given = root.get("names");
    if (given != null) {
      for (JsonNode name : given) {
        names.add(name.asText());
      }
    }
    return new Built(out, names);
  }

  private static Object[] arguments(JsonNode args, Object[] built, int at) {
    Object[] out = new Object[args.size()];
    for (int i = 0; i < args.size(); i++) {
      out[i] = value(args.get(i), built, at);
    }
    return out;
  }

  private static Object value(JsonNode arg, Object[] built, int at) {
    String tag = arg.get(0).asText();
    JsonNode v = arg.get(1);
    switch (tag) {
      case "n":
        int ref = v.asInt();
        if (ref < 0 || ref >= at) {
          throw new IllegalArgumentException("node " + at + " refers to node " + ref);
        }
        return built[ref];
      case "i":
        return v.asInt();
      case "l":
        return v.asLong();
      case "d":
        return parseDouble(v.asText());
      case "D":
        return new BigDecimal(v.asText());
      case "s":
        return v.asText();
      case "b":
        return v.asBoolean();
      case "y":
        return Base64.getDecoder().decode(v.asText());
      case "z":
        return null;
      case "L":
        List<Object> items = new ArrayList<>();
        for (JsonNode item : v) {
          items.add(value(item, built, at));
        }
        return items;
      default:
        throw new IllegalArgumentException("unknown argument tag " + tag);
    }
  }

  private static double parseDouble(String text) {
    switch (text) {
      case "nan":
        return Double.NaN;
      case "inf":
        return Double.POSITIVE_INFINITY;
      case "-inf":
        return Double.NEGATIVE_INFINITY;
      default:
        return Double.parseDouble(text);
    }
  }

  private static Object call(String kind, String name, Object[] args) throws Exception {
    Class<?> owner;
    Object target = null;
    Object[] rest = args;
    String method = name;
    switch (kind) {
      case "f":
        owner = functions.class;
        break;
      case "m":
        if (args.length == 0 || !(args[0] instanceof Column)) {
          throw new IllegalArgumentException(name + ": the receiver is not a Column");
        }
        target = args[0];
        owner = Column.class;
        rest = Arrays.copyOfRange(args, 1, args.length);
        break;
      case "h":
        int dot = name.indexOf('.');
        String helper = dot < 0 ? "" : name.substring(0, dot);
        if (!HELPERS.contains(helper)) {
          throw new IllegalArgumentException("not an engine helper: " + name);
        }
        owner = Class.forName("lineagequality." + helper);
        method = name.substring(dot + 1);
        break;
      default:
        throw new IllegalArgumentException("unknown node kind " + kind);
    }
    Method found = resolve(owner, method, rest, target == null);
    Class<?>[] params = found.getParameterTypes();
    Object[] passed = new Object[rest.length];
    for (int i = 0; i < rest.length; i++) {
      passed[i] =
          rest[i] instanceof List && Seq.class.isAssignableFrom(params[i])
              ? seq((List<?>) rest[i])
              : rest[i];
    }
    return found.invoke(target, passed);
  }

  /** The public method `name` of `owner` that takes `args`, as py4j would pick it. */
  private static Method resolve(Class<?> owner, String name, Object[] args, boolean isStatic) {
    StringBuilder key = new StringBuilder(owner.getName()).append('#').append(name);
    for (Object a : args) {
      key.append(',').append(a == null ? "null" : a.getClass().getName());
    }
    return RESOLVED.computeIfAbsent(key.toString(), k -> find(owner, name, args, isStatic));
  }

  private static Method find(Class<?> owner, String name, Object[] args, boolean isStatic) {
    List<Method> fits = new ArrayList<>();
    for (Method m : owner.getMethods()) {
      if (!m.getName().equals(name)
          || m.isBridge()
          || m.isSynthetic()
          || Modifier.isStatic(m.getModifiers()) != isStatic
          || m.getParameterCount() != args.length) {
        continue;
      }
      Class<?>[] params = m.getParameterTypes();
      boolean fit = true;
      for (int i = 0; i < args.length && fit; i++) {
        fit = accepts(params[i], args[i]);
      }
      if (fit) {
        fits.add(m);
      }
    }
    Method best = null;
    for (Method m : fits) {
      boolean specific = true;
      for (Method other : fits) {
        specific &= other == m || narrower(m, other);
      }
      if (specific) {
        best = m;
      }
    }
    if (best == null) {
      throw new IllegalArgumentException(
          (fits.isEmpty() ? "no method " : "ambiguous method ")
              + owner.getSimpleName()
              + "."
              + name
              + " for "
              + args.length
              + " argument(s)");
    }
    return best;
  }

  private static boolean narrower(Method a, Method b) {
    Class<?>[] pa = a.getParameterTypes();
    Class<?>[] pb = b.getParameterTypes();
    for (int i = 0; i < pa.length; i++) {
      if (!pb[i].isAssignableFrom(pa[i])) {
        return false;
      }
    }
    return true;
  }

  private static boolean accepts(Class<?> param, Object value) {
    if (value == null) {
      return !param.isPrimitive();
    }
    if (param.isPrimitive()) {
      return (param == int.class && value instanceof Integer)
          || (param == long.class && value instanceof Long)
          || (param == double.class && value instanceof Double)
          || (param == boolean.class && value instanceof Boolean);
    }
    if (value instanceof List && Seq.class.isAssignableFrom(param)) {
      // scala.collection.Seq on Scala 2.12, immutable.Seq on 2.13: take what seq() makes.
      return param.isInstance(EMPTY_SEQ);
    }
    return param.isInstance(value);
  }

  private static <T> scala.collection.immutable.List<T> seq(List<T> items) {
    // An immutable List: a scala.collection.Seq on 2.12 and an immutable.Seq on 2.13.
    return JavaConverters.asScalaBuffer(items).toList();
  }
}
