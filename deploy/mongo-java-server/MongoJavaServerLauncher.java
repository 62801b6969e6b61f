import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import java.util.List;

/**
 * Runs mongo-java-server with its H2 backend (data persisted in one file) on a loopback port.
 * Usage: java -cp "lib/*" MongoJavaServerLauncher.java HOST PORT FILE
 *
 * The server reports MongoDB 4.0 (wire version 7) by default, which the Node.js driver refuses
 * (it needs wire version 9, MongoDB 4.4, or newer); it announces 4.4 instead. The commands the
 * service uses are the same in both.
 */
public class MongoJavaServerLauncher {
  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: MongoJavaServerLauncher HOST PORT FILE");
      System.exit(64);
    }
    H2Backend backend = new H2Backend(args[2]);
    backend.version(new MongoVersion() {
      public List<Integer> getVersionArray() { return List.of(4, 4, 0); }
      public int getWireVersion() { return 9; }
    });
    MongoServer server = new MongoServer(backend);
    server.bind(args[0], Integer.parseInt(args[1]));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown();
      backend.close();
    }));
    System.out.println("mongo-java-server listening on " + args[0] + ":" + args[1]);
    Thread.currentThread().join();
  }
}
