import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.store.OffsetStore;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Tiny push consumer for the mqctl compat tests (clustering mode).
 *
 * Usage: java Consumer NAMESRV TOPIC GROUP SUBEXPR MAX IDLE_SECONDS LINGER_SECONDS [BLOCK_KEY [STOP_FILE]]
 *
 * Consumes from the group's committed offsets (a group without offsets starts at the first
 * offset), prints one line per received message
 *   RECV brokerName queueId queueOffset tag storeTimestamp msgId
 * and stops after MAX messages (MAX <= 0: no limit) or when nothing arrived for IDLE_SECONDS
 * since the last message (at least 20 s before the first one). It then waits LINGER_SECONDS before
 * shutdown: offset commits are one-way, so the wait lets the periodic commit reach the broker.
 * Ends with "DONE n".
 *
 * BLOCK_KEY: the message with these keys is never acknowledged: its consume thread waits until
 * shutdown (printed once as "BLOCK brokerName queueId queueOffset msgId"), the way a consumer
 * hangs on one poison message while the client goes on pulling ("-": none).
 * STOP_FILE: stop as soon as this file exists (the test is done with the consumer).
 */
public class Consumer {
    public static void main(String[] args) throws Exception {
        if (args.length < 7 || args.length > 9) {
            System.err.println("usage: Consumer NAMESRV TOPIC GROUP SUBEXPR MAX IDLE_SECONDS LINGER_SECONDS [BLOCK_KEY [STOP_FILE]]");
            System.exit(2);
        }
        String topic = args[1];
        int max = Integer.parseInt(args[4]);
        long idleMs = Long.parseLong(args[5]) * 1000L;
        long lingerMs = Long.parseLong(args[6]) * 1000L;
        String blockKey = args.length > 7 && !"-".equals(args[7]) ? args[7] : null;
        java.io.File stopFile = args.length > 8 ? new java.io.File(args[8]) : null;

        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[2], Acl.hook(), new AllocateMessageQueueAveragely());
        consumer.setNamesrvAddr(args[0]);
        consumer.setInstanceName("compat-consumer-" + ProcessHandle.current().pid());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeThreadMin(1);
        consumer.setConsumeThreadMax(1);
        consumer.setConsumeMessageBatchMaxSize(1);
        // Commit every second instead of every 5 s so LINGER_SECONDS can stay short.
        consumer.setPersistConsumerOffsetInterval(1000);
        // A heartbeat every second, not every 30 s: a heartbeat that loses the client's heartbeat
        // lock is skipped, not retried. When the one a rebalance sends with the subscription's new
        // version is skipped, the brokers answer pulls with 25 SUBSCRIPTION_NOT_LATEST until the
        // next periodic heartbeat (see FirstRebalance for the one start() sends).
        consumer.setHeartbeatBrokerInterval(1000);
        consumer.subscribe(topic, args[3]);

        AtomicInteger count = new AtomicInteger();
        AtomicLong last = new AtomicLong(System.currentTimeMillis());
        Object printLock = new Object();
        consumer.registerMessageListener(new MessageListenerConcurrently() {
            @Override
            public ConsumeConcurrentlyStatus consumeMessage(List<MessageExt> msgs, ConsumeConcurrentlyContext ctx) {
                for (MessageExt m : msgs) {
                    if (blockKey != null && blockKey.equals(m.getKeys())) {
                        synchronized (printLock) {
                            System.out.println("BLOCK " + m.getBrokerName() + " " + m.getQueueId() + " "
                                + m.getQueueOffset() + " " + m.getMsgId());
                            System.out.flush();
                        }
                        try {
                            Thread.sleep(Long.MAX_VALUE);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                    }
                    synchronized (printLock) {
                        String tag = m.getTags() == null ? "-" : m.getTags();
                        System.out.println("RECV " + m.getBrokerName() + " " + m.getQueueId() + " "
                            + m.getQueueOffset() + " " + tag + " " + m.getStoreTimestamp() + " " + m.getMsgId());
                        System.out.flush();
                    }
                    count.incrementAndGet();
                }
                last.set(System.currentTimeMillis());
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            }
        });
        consumer.start();
        FirstRebalance.now(consumer);
        last.set(System.currentTimeMillis());
        while (true) {
            Thread.sleep(100);
            if (stopFile != null && stopFile.exists()) {
                break;
            }
            if (max > 0 && count.get() >= max) {
                // Stop pulling; messages already pulled are still consumed (and printed).
                consumer.suspend();
                break;
            }
            // Before the first message allow at least 20 s: rebalance and the first pull can be
            // slow on a loaded machine, and every caller expects messages.
            long quiet = count.get() == 0 ? Math.max(idleMs, 20000L) : idleMs;
            if (System.currentTimeMillis() - last.get() >= quiet) {
                break;
            }
        }
        Thread.sleep(lingerMs);
        commitInOrder(consumer);
        consumer.shutdown();
        System.out.println("DONE " + count.get());
        System.out.flush();
        System.exit(0);
    }

    /**
     * Commit every held queue's offset synchronously, one queue after the other, before
     * shutdown() sends them all again one-way. A broker loses offsets when several commits of a
     * topic@group it has no entry for yet arrive at once (ConsumerOffsetManager.commitOffset
     * creates the queue map with get-then-put, 4.9.7 and 5.3.3 alike, so concurrent first commits
     * overwrite each other). A 4.9.7 consumer that runs only a few seconds has committed nothing
     * before shutdown (seen: one queue of broker-b never committed). Same values as the client
     * would commit.
     */
    private static void commitInOrder(DefaultMQPushConsumer consumer) {
        OffsetStore store = consumer.getDefaultMQPushConsumerImpl().getOffsetStore();
        for (MessageQueue mq : consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet()) {
            long offset = store.readOffset(mq, ReadOffsetType.READ_FROM_MEMORY);
            if (offset < 0) {
                continue;
            }
            try {
                store.updateConsumeOffsetToBroker(mq, offset, false);
            } catch (Exception e) {
                System.err.println("WARN commit " + mq + " " + offset + ": " + e);
            }
        }
    }
}
