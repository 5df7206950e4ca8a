/*
 * rdshare: K librdkafka share consumers (KIP-932) of one share group read
 * N records of a topic, accepting each implicitly on the next poll, then
 * close. It prints "records bytes seconds" on stdout. mkbench's share
 * scenario runs it against minikafka and kfake in turn (-librdkafka-share).
 *
 *   rdshare BOOTSTRAP TOPIC GROUP N K
 *
 * Built against librdkafka 2.15.1 (the share consumer API), e.g. the copy
 * compat_test/librdkafka_suite.sh builds: see internal/bench/cmd/rdshare/build.sh.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdkafka.h"

static const char *bootstrap, *topic, *group;
static long long want;
static atomic_llong got, got_bytes;
static atomic_int failed;

static void *consume(void *arg) {
        char errstr[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        (void)arg;
        if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof errstr) ||
            rd_kafka_conf_set(conf, "group.id", group, errstr, sizeof errstr)) {
                fprintf(stderr, "conf: %s\n", errstr);
                atomic_store(&failed, 1);
                return NULL;
        }
        rd_kafka_share_t *rk = rd_kafka_share_consumer_new(conf, errstr, sizeof errstr);
        if (!rk) {
                fprintf(stderr, "share consumer: %s\n", errstr);
                atomic_store(&failed, 1);
                return NULL;
        }
        rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(topics, topic, RD_KAFKA_PARTITION_UA);
        rd_kafka_resp_err_t err = rd_kafka_share_subscribe(rk, topics);
        rd_kafka_topic_partition_list_destroy(topics);
        if (err) {
                fprintf(stderr, "subscribe: %s\n", rd_kafka_err2str(err));
                atomic_store(&failed, 1);
                return NULL;
        }
        while (atomic_load(&got) < want && !atomic_load(&failed)) {
                rd_kafka_messages_t *batch = NULL;
                rd_kafka_error_t *e = rd_kafka_share_poll(rk, 200, &batch);
                if (e) {
                        rd_kafka_error_destroy(e);
                        continue;
                }
                size_t n = rd_kafka_messages_count(batch);
                long long bytes = 0, ok = 0;
                for (size_t i = 0; i < n; i++) {
                        rd_kafka_message_t *m = rd_kafka_messages_get(batch, i);
                        if (!m->err) {
                                ok++;
                                bytes += (long long)m->len;
                        }
                }
                atomic_fetch_add(&got, ok);
                atomic_fetch_add(&got_bytes, bytes);
                rd_kafka_messages_destroy(batch);
        }
        rd_kafka_share_consumer_close(rk);
        rd_kafka_share_destroy(rk);
        return NULL;
}

int main(int argc, char **argv) {
        if (argc != 6) {
                fprintf(stderr, "usage: rdshare BOOTSTRAP TOPIC GROUP N K\n");
                return 2;
        }
        bootstrap = argv[1];
        topic = argv[2];
        group = argv[3];
        want = atoll(argv[4]);
        int k = atoi(argv[5]);
        if (want <= 0 || k <= 0 || k > 64) {
                fprintf(stderr, "N and K must be positive (K <= 64)\n");
                return 2;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pthread_t th[64];
        for (int i = 0; i < k; i++)
                pthread_create(&th[i], NULL, consume, NULL);
        for (int i = 0; i < k; i++)
                pthread_join(th[i], NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (atomic_load(&failed) || atomic_load(&got) < want) {
                fprintf(stderr, "consumed %lld of %lld\n", (long long)atomic_load(&got), want);
                return 1;
        }
        printf("%lld %lld %.6f\n", (long long)atomic_load(&got), (long long)atomic_load(&got_bytes),
               (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
        return 0;
}
