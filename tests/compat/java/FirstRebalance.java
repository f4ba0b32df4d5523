import java.lang.reflect.Method;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;

/**
 * Called right after DefaultMQPushConsumer.start(): heartbeat until one gets through, then ask
 * for a rebalance now.
 *
 * The 5.x client's start() rebalances at once only when its own heartbeat took the client's
 * heartbeat lock (DefaultMQPushConsumerImpl.start: "if (sendHeartbeatToAllBrokerWithLock())
 * rebalanceImmediately()"). When the periodic heartbeat holds the lock at that moment, start()
 * logs "lock heartBeat, but failed" and the first rebalance comes only with the RebalanceService's
 * next round, 20 s later (rocketmq.client.rebalance.waitInterval). Seen on a 5.5.1 cluster in CI:
 * a broadcasting consumer got its queues after 20 s and ended empty-handed at its 20 s wait for
 * the first message. The 4.x client always rebalances after start() and its heartbeat method
 * returns nothing; there one extra heartbeat is sent and the rebalance is asked for again.
 *
 * The heartbeat sent here can itself take the lock from the one a rebalance sends with the
 * subscription's new version (RebalancePushImpl.messageQueueChanged, tryLock, no retry): the
 * consumers therefore heartbeat every second, so a skipped heartbeat is made good within one.
 */
final class FirstRebalance {
    private FirstRebalance() {
    }

    static void now(DefaultMQPushConsumer consumer) throws Exception {
        MQClientInstance factory = consumer.getDefaultMQPushConsumerImpl().getmQClientFactory();
        // boolean on 5.x, void on 4.x: called by reflection so this compiles against both
        Method heartbeat = MQClientInstance.class.getMethod("sendHeartbeatToAllBrokerWithLock");
        long deadline = System.currentTimeMillis() + 10000L;
        while (true) {
            Object sent = heartbeat.invoke(factory);
            if (!(sent instanceof Boolean) || (Boolean) sent) {
                break;
            }
            if (System.currentTimeMillis() > deadline) {
                System.err.println("WARN no heartbeat got through within 10 s of start()");
                break;
            }
            Thread.sleep(100);
        }
        factory.rebalanceImmediately();
    }
}
