import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Tiny producer for the mqctl compat tests.
 *
 * Usage: java Producer NAMESRV TOPIC GROUP  (plan on stdin)
 *
 * Plan lines (whitespace separated, '-' = none, '#' starts a comment):
 *   send  TAG KEYS [QUEUE_ID [BROKER]]      one message; QUEUE_ID -1 = let the client choose
 *   batch N TAG KEYS QUEUE_ID [BROKER]      N messages in one batch request: the broker gives the
 *                                           whole batch one store timestamp (equal-time runs)
 *   sleep MS
 *
 * Output, one line per stored message:
 *   SENT brokerName queueId queueOffset msgId tag
 * and a final "DONE n". Any failure prints "ERROR ..." and exits 1.
 */
public class Producer {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Producer NAMESRV TOPIC GROUP < plan");
            System.exit(2);
        }
        String topic = args[1];
        DefaultMQProducer producer = new DefaultMQProducer(args[2], Acl.hook());
        producer.setNamesrvAddr(args[0]);
        producer.setInstanceName("compat-producer-" + ProcessHandle.current().pid());
        producer.setSendMsgTimeout(10000);
        // A failed send must fail the test, not be retried onto another queue.
        producer.setRetryTimesWhenSendFailed(0);
        producer.start();
        int sent = 0;
        int exit = 0;
        try {
            List<MessageQueue> queues = producer.fetchPublishMessageQueues(topic);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                int hash = line.indexOf('#');
                if (hash >= 0) {
                    line = line.substring(0, hash);
                }
                String[] f = line.trim().split("\\s+");
                if (f.length == 0 || f[0].isEmpty()) {
                    continue;
                }
                switch (f[0]) {
                    case "sleep":
                        Thread.sleep(Long.parseLong(f[1]));
                        break;
                    case "send": {
                        Message msg = message(topic, f[1], f[2], sent);
                        int queueId = f.length > 3 ? Integer.parseInt(f[3]) : -1;
                        String broker = f.length > 4 ? f[4] : null;
                        SendResult r;
                        if (queueId < 0) {
                            r = producer.send(msg);
                        } else {
                            MessageQueue target = pick(queues, topic, queueId, broker);
                            r = producer.send(msg, new MessageQueueSelector() {
                                @Override
                                public MessageQueue select(List<MessageQueue> mqs, Message m, Object arg) {
                                    return (MessageQueue) arg;
                                }
                            }, target);
                        }
                        check(r);
                        print(r.getMessageQueue(), r.getQueueOffset(), r.getMsgId(), f[1]);
                        sent++;
                        break;
                    }
                    case "batch": {
                        int n = Integer.parseInt(f[1]);
                        MessageQueue target = pick(queues, topic, Integer.parseInt(f[4]), f.length > 5 ? f[5] : null);
                        List<Message> msgs = new ArrayList<>();
                        for (int i = 0; i < n; i++) {
                            msgs.add(message(topic, f[2], f[3], sent + i));
                        }
                        SendResult r = producer.send(msgs, target);
                        check(r);
                        // The result carries the first message's queue offset; the batch is contiguous.
                        String[] ids = r.getMsgId().split(",");
                        for (int i = 0; i < n; i++) {
                            print(r.getMessageQueue(), r.getQueueOffset() + i, i < ids.length ? ids[i] : "-", f[2]);
                        }
                        sent += n;
                        break;
                    }
                    default:
                        throw new IllegalArgumentException("plan line " + lineNo + ": unknown verb " + f[0]);
                }
            }
            System.out.println("DONE " + sent);
        } catch (Throwable t) {
            System.out.println("ERROR " + t);
            t.printStackTrace();
            exit = 1;
        } finally {
            System.out.flush();
            producer.shutdown();
        }
        System.exit(exit);
    }

    private static Message message(String topic, String tag, String keys, int seq) {
        Message msg = new Message(topic, ("compat message " + seq).getBytes(StandardCharsets.UTF_8));
        if (!"-".equals(tag)) {
            msg.setTags(tag);
        }
        if (!"-".equals(keys)) {
            msg.setKeys(keys);
        }
        return msg;
    }

    private static MessageQueue pick(List<MessageQueue> queues, String topic, int queueId, String broker) {
        for (MessageQueue mq : queues) {
            if (mq.getQueueId() == queueId && (broker == null || broker.equals(mq.getBrokerName()))) {
                return mq;
            }
        }
        throw new IllegalArgumentException("no queue " + queueId + " on " + broker + " for " + topic + " in " + queues);
    }

    private static void check(SendResult r) {
        if (r.getSendStatus() != SendStatus.SEND_OK) {
            throw new IllegalStateException("send status " + r.getSendStatus() + ": " + r);
        }
    }

    private static void print(MessageQueue mq, long offset, String msgId, String tag) {
        System.out.println("SENT " + mq.getBrokerName() + " " + mq.getQueueId() + " " + offset + " " + msgId + " " + tag);
    }
}
