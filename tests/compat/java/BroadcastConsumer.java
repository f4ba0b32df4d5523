import java.io.File;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.store.OffsetStore;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * A BROADCASTING push consumer for the mqctl compat tests: its offsets live in the client's own
 * offsets.json (LocalFileOffsetStore), under the directory given by the JVM's system property
 * rocketmq.client.localOffsetStoreDir (set it with -D: the client reads it once, at class load).
 *
 * Usage: java BroadcastConsumer NAMESRV TOPIC GROUP SUBEXPR INSTANCE [key=value ...]
 *   max=N        stop pulling after N messages (default 0: no limit)
 *   idle=S       stop when nothing arrived for S seconds (default 5; at least 20 s before the first
 *                message; 0: never, only max or the stop file end the run)
 *   stop=FILE    stop as soon as FILE exists
 *   from=WHERE   FIRST (default), LAST or TIMESTAMP:yyyyMMddHHmmss (ConsumeFromWhere: used only
 *                for queues the file has no offset for)
 *   persist=MS   persistConsumerOffsetInterval (default: the client's own, 5000)
 *   batch=N      pullBatchSize and pullThresholdForQueue (default: the client's own, 32 and
 *                1000): with 1 and pace=MS the client pulls little ahead of what it consumed, so
 *                a run that stops after max=N messages stops part-way through the queues
 *   pace=MS      sleep this long in the listener per message (default 0)
 *
 * Prints "START clientId" once started, one line per received message
 *   RECV brokerName queueId queueOffset tag storeTimestamp msgId
 * then, when it stops: pulling is suspended and the run waits until every pulled message was
 * consumed (each queue's process queue is empty), so what was printed is exactly what the client
 * considers consumed; "OFFSET brokerName queueId offset" per queue from the client's memory;
 * shutdown() (which persists offsets.json); "DONE n".
 *
 * Compiles against the 4.x and the 5.x client: MessageModel moved from
 * org.apache.rocketmq.common.protocol.heartbeat (4.x) to org.apache.rocketmq.remoting.protocol.heartbeat
 * (5.x), so it is never named here (setBroadcasting takes it from setMessageModel's signature).
 */
public class BroadcastConsumer {
    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: BroadcastConsumer NAMESRV TOPIC GROUP SUBEXPR INSTANCE [key=value ...]");
            System.exit(2);
        }
        Map<String, String> opt = new HashMap<>();
        for (int i = 5; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("bad option: " + args[i]);
                System.exit(2);
            }
            opt.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        int max = Integer.parseInt(opt.getOrDefault("max", "0"));
        long idleMs = Long.parseLong(opt.getOrDefault("idle", "5")) * 1000L;
        File stopFile = opt.containsKey("stop") ? new File(opt.get("stop")) : null;

        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[2]);
        consumer.setNamesrvAddr(args[0]);
        consumer.setInstanceName(args[4]);
        setBroadcasting(consumer);
        String from = opt.getOrDefault("from", "FIRST");
        if (from.equals("FIRST")) {
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        } else if (from.equals("LAST")) {
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        } else if (from.startsWith("TIMESTAMP:")) {
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_TIMESTAMP);
            consumer.setConsumeTimestamp(from.substring("TIMESTAMP:".length()));
        } else {
            System.err.println("bad from=" + from);
            System.exit(2);
        }
        if (opt.containsKey("persist")) {
            consumer.setPersistConsumerOffsetInterval(Integer.parseInt(opt.get("persist")));
        }
        if (opt.containsKey("batch")) {
            consumer.setPullBatchSize(Integer.parseInt(opt.get("batch")));
            consumer.setPullThresholdForQueue(Integer.parseInt(opt.get("batch")));
        }
        // A heartbeat every second, not every 30 s: when a rebalance's heartbeat (which carries the
        // subscription's new version) meets another one in progress, the 4.9.7 client skips it
        // ("lock heartBeat, but failed"), the broker then answers every pull with 25
        // SUBSCRIPTION_NOT_LATEST until the next periodic heartbeat, and a run that waits 20 s for
        // its first message ends with none.
        consumer.setHeartbeatBrokerInterval(1000);
        consumer.setConsumeThreadMin(1);
        consumer.setConsumeThreadMax(1);
        consumer.setConsumeMessageBatchMaxSize(1);
        consumer.subscribe(args[1], args[3]);

        long paceMs = Long.parseLong(opt.getOrDefault("pace", "0"));
        AtomicInteger count = new AtomicInteger();
        AtomicLong last = new AtomicLong(System.currentTimeMillis());
        Object printLock = new Object();
        consumer.registerMessageListener(new MessageListenerConcurrently() {
            @Override
            public ConsumeConcurrentlyStatus consumeMessage(List<MessageExt> msgs, ConsumeConcurrentlyContext ctx) {
                for (MessageExt m : msgs) {
                    synchronized (printLock) {
                        String tag = m.getTags() == null ? "-" : m.getTags();
                        System.out.println("RECV " + m.getBrokerName() + " " + m.getQueueId() + " "
                            + m.getQueueOffset() + " " + tag + " " + m.getStoreTimestamp() + " " + m.getMsgId());
                        System.out.flush();
                    }
                    if (count.incrementAndGet() == max) {
                        // Stop pulling at once (the main loop would notice 100 ms later).
                        consumer.suspend();
                    }
                    if (paceMs > 0) {
                        try {
                            Thread.sleep(paceMs);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }
                last.set(System.currentTimeMillis());
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            }
        });
        consumer.start();
        FirstRebalance.now(consumer);
        System.out.println("START " + consumer.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId());
        System.out.flush();
        last.set(System.currentTimeMillis());
        while (true) {
            Thread.sleep(100);
            if (stopFile != null && stopFile.exists()) {
                break;
            }
            if (max > 0 && count.get() >= max) {
                break;
            }
            if (idleMs > 0) {
                long quiet = count.get() == 0 ? Math.max(idleMs, 20000L) : idleMs;
                if (System.currentTimeMillis() - last.get() >= quiet) {
                    break;
                }
            }
        }
        consumer.suspend();
        drain(consumer, count);
        OffsetStore store = consumer.getDefaultMQPushConsumerImpl().getOffsetStore();
        for (MessageQueue mq : consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet()) {
            long offset = store.readOffset(mq, ReadOffsetType.READ_FROM_MEMORY);
            System.out.println("OFFSET " + mq.getBrokerName() + " " + mq.getQueueId() + " " + offset);
        }
        consumer.shutdown();
        System.out.println("DONE " + count.get());
        System.out.flush();
        System.exit(0);
    }

    /**
     * Wait (10 s at most) until no process queue holds a message and the count stood still for a
     * second: a pull already in flight when the consumer was suspended still delivers its messages.
     */
    private static void drain(DefaultMQPushConsumer consumer, AtomicInteger count) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 10000L;
        int seen = -1;
        long stillSince = System.currentTimeMillis();
        while (System.currentTimeMillis() < deadline) {
            boolean empty = true;
            for (ProcessQueue pq : consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().values()) {
                if (pq.getMsgCount().get() > 0) {
                    empty = false;
                }
            }
            int now = count.get();
            if (now != seen) {
                seen = now;
                stillSince = System.currentTimeMillis();
            }
            if (empty && System.currentTimeMillis() - stillSince >= 1000L) {
                return;
            }
            Thread.sleep(100);
        }
        System.err.println("WARN process queues not drained within 10 s");
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void setBroadcasting(DefaultMQPushConsumer consumer) throws Exception {
        for (java.lang.reflect.Method m : DefaultMQPushConsumer.class.getMethods()) {
            if (m.getName().equals("setMessageModel") && m.getParameterCount() == 1) {
                Class enumType = m.getParameterTypes()[0];
                m.invoke(consumer, Enum.valueOf(enumType, "BROADCASTING"));
                return;
            }
        }
        throw new IllegalStateException("no DefaultMQPushConsumer.setMessageModel");
    }
}
