import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;

import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * Test setup in one JVM (each mqadmin call costs a JVM start): wait until the named brokers are
 * registered with the name server (a broker prints "boot success" before its first registration
 * is visible), create topics and groups on them, then wait until every created topic is routed.
 *
 * Usage: java Admin NAMESRV OP...
 *   topic:NAME:QUEUES:BROKER[+BROKER...][:PERM]   read = write = QUEUES, perm default 6 (RW);
 *                                                 repeat the op per broker for different counts
 *   group:NAME:BROKER[+BROKER...]
 *   broker:NAME                                   only wait until NAME is registered
 *   clone:SRC:DEST:TOPIC                          copy SRC's committed offsets of TOPIC to DEST on
 *                                                 every broker of TOPIC's route (offline mode)
 *
 * Compiles against the 4.x and the 5.x client: the route, cluster and subscription-group classes
 * moved from org.apache.rocketmq.common.protocol/.subscription (4.x) to
 * org.apache.rocketmq.remoting.protocol (5.x), so they are never named here (var, reflection).
 *
 * Prints "OK topic NAME" / "OK group NAME" per operation; any failure prints "ERROR ..." and
 * exits 1.
 */
public class Admin {
    public static void main(String[] args) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(Acl.hook());
        admin.setNamesrvAddr(args[0]);
        admin.setInstanceName("compat-admin-" + ProcessHandle.current().pid());
        admin.start();
        int exit = 0;
        try {
            Map<String, String> masters = awaitMasters(admin, args);
            Map<String, Integer> expectedBrokers = new HashMap<>();
            for (int i = 1; i < args.length; i++) {
                String[] f = args[i].split(":");
                if (f[0].equals("topic")) {
                    int queues = Integer.parseInt(f[2]);
                    int perm = f.length > 4 ? Integer.parseInt(f[4]) : 6;
                    String[] brokers = f[3].split("\\+");
                    for (String b : brokers) {
                        TopicConfig tc = new TopicConfig(f[1], queues, queues, perm);
                        admin.createAndUpdateTopicConfig(addr(masters, b), tc);
                    }
                    expectedBrokers.merge(f[1], brokers.length, Integer::sum);
                    System.out.println("OK topic " + f[1]);
                } else if (f[0].equals("group")) {
                    for (String b : f[2].split("\\+")) {
                        createGroup(admin, addr(masters, b), f[1]);
                    }
                    System.out.println("OK group " + f[1]);
                } else if (f[0].equals("clone")) {
                    admin.cloneGroupOffset(f[1], f[2], f[3], true);
                    System.out.println("OK clone " + f[1] + " " + f[2] + " " + f[3]);
                } else if (f[0].equals("broker")) {
                    System.out.println("OK broker " + f[1] + " " + masters.get(f[1]));
                } else {
                    throw new IllegalArgumentException("unknown op " + args[i]);
                }
            }
            // Brokers register new topics with the name server asynchronously.
            for (Map.Entry<String, Integer> e : expectedBrokers.entrySet()) {
                long deadline = System.currentTimeMillis() + 60000;
                while (true) {
                    int seen = 0;
                    try {
                        var route = admin.examineTopicRouteInfo(e.getKey());
                        seen = route.getQueueDatas().size();
                    } catch (Exception notYet) {
                        // route not registered yet
                    }
                    if (seen >= e.getValue()) {
                        break;
                    }
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("route of " + e.getKey() + " not visible after 60 s");
                    }
                    Thread.sleep(200);
                }
            }
            System.out.println("DONE");
        } catch (Throwable t) {
            System.out.println("ERROR " + t);
            t.printStackTrace();
            exit = 1;
        } finally {
            System.out.flush();
            admin.shutdown();
        }
        System.exit(exit);
    }

    /** Broker name -> master address, once every broker named in the ops is registered. */
    private static Map<String, String> awaitMasters(DefaultMQAdminExt admin, String[] args) throws Exception {
        java.util.Set<String> wanted = new java.util.HashSet<>();
        for (int i = 1; i < args.length; i++) {
            String[] f = args[i].split(":");
            if (!f[0].equals("clone")) {
                wanted.addAll(java.util.Arrays.asList(f[f[0].equals("topic") ? 3 : f[0].equals("group") ? 2 : 1].split("\\+")));
            }
        }
        long deadline = System.currentTimeMillis() + 60000;
        while (true) {
            Map<String, String> masters = new HashMap<>();
            var cluster = admin.examineBrokerClusterInfo();
            for (var bd : cluster.getBrokerAddrTable().values()) {
                String master = bd.getBrokerAddrs().get(0L);
                if (master != null) {
                    masters.put(bd.getBrokerName(), master);
                }
            }
            if (masters.keySet().containsAll(wanted)) {
                return masters;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("brokers " + wanted + " not all registered: " + masters);
            }
            Thread.sleep(300);
        }
    }

    /** createAndUpdateSubscriptionGroupConfig with a default config named GROUP, whatever its class. */
    private static void createGroup(DefaultMQAdminExt admin, String addr, String group) throws Exception {
        for (Method m : DefaultMQAdminExt.class.getMethods()) {
            if (m.getName().equals("createAndUpdateSubscriptionGroupConfig") && m.getParameterCount() == 2
                && m.getParameterTypes()[0] == String.class) {
                Object config = m.getParameterTypes()[1].getConstructor().newInstance();
                config.getClass().getMethod("setGroupName", String.class).invoke(config, group);
                m.invoke(admin, addr, config);
                return;
            }
        }
        throw new IllegalStateException("no createAndUpdateSubscriptionGroupConfig(String, config) in this client");
    }

    private static String addr(Map<String, String> masters, String broker) {
        String a = masters.get(broker);
        if (a == null) {
            throw new IllegalArgumentException("no master for broker " + broker + " in " + masters);
        }
        return a;
    }
}
