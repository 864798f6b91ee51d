package lineagequality;

import java.lang.reflect.Field;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;

import py4j.DefaultGatewayServerListener;
import py4j.GatewayServer;
import py4j.GatewayServerListener;
import py4j.Py4JServerConnection;

/**
 * TCP_NODELAY on the sockets py4j answers Python on. py4j's Java side writes an answer through
 * a buffered writer: one longer than 8,192 bytes (a wide table's schema, a long file listing, a
 * helper's answers) leaves in two writes, and Nagle's algorithm holds the second until Python
 * acknowledges the first, which Python's delayed acknowledgement puts off by ~40 ms. Every such
 * call then takes ~44 ms instead of ~1 (py4j issue 516, mended in later py4j releases than the
 * ones PySpark 3.5 and 4.1 ship). Nothing else changes: the same bytes, in the same order.
 */
public final class Py4jSockets {
  private Py4jSockets() {}

  /** Marks the listener this class adds, so a server gets one however often it is asked. */
  private static final class NoDelay extends DefaultGatewayServerListener {
    @Override
    public void connectionStarted(Py4JServerConnection connection) {
      set(connection);
    }
  }

  /**
   * Sets TCP_NODELAY on each connection `server` has open (where its list can be read) and, by a
   * listener, on each it opens later (py4j opens one per Python thread). The number of sockets
   * set now; -1 where `server` is not a py4j gateway server (nothing done).
   */
  public static int noDelay(Object server) {
    if (!(server instanceof GatewayServer)) {
      return -1;
    }
    GatewayServer gateway = (GatewayServer) server;
    synchronized (Py4jSockets.class) {
      boolean added = false;
      for (GatewayServerListener listener : gateway.getListeners()) {
        added |= listener instanceof NoDelay;
      }
      if (!added) {
        gateway.addListener(new NoDelay());
      }
    }
    int set = 0;
    for (Py4JServerConnection connection : open(gateway)) {
      set += set(connection) ? 1 : 0;
    }
    return set;
  }

  /** Whether each open connection of `server` has TCP_NODELAY (for tests); empty if unknown. */
  public static boolean[] states(Object server) {
    if (!(server instanceof GatewayServer)) {
      return new boolean[0];
    }
    List<Py4JServerConnection> open = open((GatewayServer) server);
    boolean[] states = new boolean[open.size()];
    for (int i = 0; i < states.length; i++) {
      try {
        Socket socket = open.get(i).getSocket();
        states[i] = socket != null && socket.getTcpNoDelay();
      } catch (SocketException closed) {
        states[i] = false;
      }
    }
    return states;
  }

  private static boolean set(Py4JServerConnection connection) {
    try {
      Socket socket = connection.getSocket();
      if (socket == null || socket.isClosed()) {
        return false;
      }
      socket.setTcpNoDelay(true);
      return true;
    } catch (SocketException | RuntimeException closing) {
      return false; // a connection closing as it is set: it answers nothing more
    }
  }

  /** A copy of the server's open connections; empty where py4j keeps them elsewhere. */
  private static List<Py4JServerConnection> open(GatewayServer gateway) {
    List<Py4JServerConnection> copy = new ArrayList<>();
    try {
      Object connections = field(gateway, "connections");
      Object lock = field(gateway, "lock"); // py4j's own guard of that list
      if (!(connections instanceof List) || !(lock instanceof Lock)) {
        return copy;
      }
      ((Lock) lock).lock();
      try {
        for (Object connection : (List<?>) connections) {
          if (connection instanceof Py4JServerConnection) {
            copy.add((Py4JServerConnection) connection);
          }
        }
      } finally {
        ((Lock) lock).unlock();
      }
    } catch (ReflectiveOperationException | RuntimeException other) {
      // another py4j: the listener still covers the connections it opens from now on
    }
    return copy;
  }

  private static Object field(GatewayServer gateway, String name)
      throws ReflectiveOperationException {
    Field field = GatewayServer.class.getDeclaredField(name);
    field.setAccessible(true);
    return field.get(gateway);
  }
}
