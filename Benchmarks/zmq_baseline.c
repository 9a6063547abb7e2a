/*
 * zmq_baseline: the raw libzmq figures `make bench` puts ours beside.
 *
 * Built by Benchmarks/run.sh: gcc -O2 zmq_baseline.c $(pkg-config --cflags --libs libzmq)
 *
 *   zmq_baseline pub   DATA_EP SYNC_EP COUNT HWM bind|connect
 *   zmq_baseline sub   DATA_EP SYNC_EP COUNT HWM bind|connect
 *   zmq_baseline proxy FRONT_EP BACK_EP HWM        (XSUB on FRONT, XPUB on BACK; until killed)
 *
 * A message is three frames, the shape of a bus delivery: a 24-byte topic, a
 * 16-byte header (sequence number, send time in ns) and a 256-byte body.
 *
 * Joining: a SUB that connects late misses what was published before its
 * subscription arrived. The publisher therefore owns a PULL socket bound on
 * SYNC_EP and keeps publishing small "probe" messages (sequence number
 * PROBE) until the subscriber, having seen one, pushes a single "go" frame
 * to SYNC_EP. Only then does the measured stream start, so nothing of it can
 * be lost to the join. With HWM 0 (no limit) PUB drops nothing either.
 *
 * The subscriber reports the rate as COUNT / (arrival of the last message -
 * send time of the first), both on CLOCK_MONOTONIC, which all processes of a
 * host share. Each mode prints one line starting with RESULT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#define TOPIC_BYTES 24
#define HEADER_BYTES 16
#define BODY_BYTES 256
#define PROBE UINT64_MAX

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "zmq_baseline: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static void check(int rc, const char *what) {
    if (rc < 0) die(what);
}

static void attach(void *socket, const char *endpoint, const char *how) {
    if (strcmp(how, "bind") == 0) check(zmq_bind(socket, endpoint), endpoint);
    else check(zmq_connect(socket, endpoint), endpoint);
}

static void set_int(void *socket, int option, int value, const char *what) {
    check(zmq_setsockopt(socket, option, &value, sizeof value), what);
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sends topic | header(seq, now) | body; the body is the same bytes every time. */
static void send_message(void *pub, const char *topic, uint64_t seq, const char *body) {
    uint64_t header[2] = {seq, mono_ns()};
    check(zmq_send(pub, topic, TOPIC_BYTES, ZMQ_SNDMORE), "send topic");
    check(zmq_send(pub, header, HEADER_BYTES, ZMQ_SNDMORE), "send header");
    check(zmq_send(pub, body, BODY_BYTES, 0), "send body");
}

static int run_pub(const char *data_ep, const char *sync_ep, long count, int hwm, const char *how) {
    void *context = zmq_ctx_new();
    void *pub = zmq_socket(context, ZMQ_PUB);
    void *sync = zmq_socket(context, ZMQ_PULL);
    set_int(pub, ZMQ_SNDHWM, hwm, "ZMQ_SNDHWM");
    attach(pub, data_ep, how);
    check(zmq_bind(sync, sync_ep), sync_ep);

    char topic[TOPIC_BYTES], body[BODY_BYTES];
    memset(topic, 't', sizeof topic);
    memcpy(topic, "out/messaging:bench/evt", 23);
    for (int i = 0; i < BODY_BYTES; i++) body[i] = (char)('a' + i % 26);

    /* Probe every millisecond until the subscriber says go. */
    long probes = 0;
    zmq_pollitem_t item = {sync, 0, ZMQ_POLLIN, 0};
    for (;;) {
        send_message(pub, topic, PROBE, body);
        probes++;
        check(zmq_poll(&item, 1, 1), "poll sync");
        if (item.revents & ZMQ_POLLIN) break;
    }
    char go[8];
    check(zmq_recv(sync, go, sizeof go, 0), "recv go");

    double cpu0 = cpu_seconds();
    uint64_t start = mono_ns();
    for (long seq = 0; seq < count; seq++) send_message(pub, topic, (uint64_t)seq, body);
    uint64_t sent = mono_ns();
    double seconds = (double)(sent - start) / 1e9;
    printf("RESULT mode=pub count=%ld probes=%ld send_seconds=%.4f send_rate=%.0f cpu_seconds=%.3f\n",
           count, probes, seconds, seconds > 0 ? (double)count / seconds : 0.0, cpu_seconds() - cpu0);
    fflush(stdout);
    /* The default linger lets libzmq hand over everything queued before the context ends. */
    zmq_close(sync);
    zmq_close(pub);
    zmq_ctx_term(context);
    return 0;
}

static int run_sub(const char *data_ep, const char *sync_ep, long count, int hwm, const char *how) {
    void *context = zmq_ctx_new();
    void *sub = zmq_socket(context, ZMQ_SUB);
    void *sync = zmq_socket(context, ZMQ_PUSH);
    set_int(sub, ZMQ_RCVHWM, hwm, "ZMQ_RCVHWM");
    check(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0), "ZMQ_SUBSCRIBE");
    set_int(sub, ZMQ_RCVTIMEO, 20000, "ZMQ_RCVTIMEO");
    attach(sub, data_ep, how);
    check(zmq_connect(sync, sync_ep), sync_ep);

    zmq_msg_t frame;
    zmq_msg_init(&frame);
    uint64_t header[2];
    int said_go = 0, timed_out = 0;
    long received = 0, out_of_order = 0, malformed = 0;
    uint64_t expected = 0, first_sent = 0, last_arrival = 0;
    double cpu0 = 0;
    while (received < count) {
        /* One message: topic, header, body. */
        int part = 0, more = 1, bad = 0;
        header[0] = PROBE;
        while (more) {
            int size = zmq_msg_recv(&frame, sub, 0);
            if (size < 0) {
                if (zmq_errno() == EAGAIN) { timed_out = 1; break; }
                die("recv");
            }
            if (part == 1 && size == HEADER_BYTES) memcpy(header, zmq_msg_data(&frame), HEADER_BYTES);
            if ((part == 0 && size != TOPIC_BYTES) || (part == 2 && size != BODY_BYTES)) bad = 1;
            more = zmq_msg_more(&frame);
            part++;
        }
        if (timed_out) break;
        if (header[0] == PROBE) {
            if (!said_go) {
                check(zmq_send(sync, "go", 2, 0), "send go");
                said_go = 1;
                cpu0 = cpu_seconds();
            }
            continue;
        }
        if (bad || part != 3) malformed++;
        if (received == 0) first_sent = header[1];
        if (header[0] != expected) out_of_order++;
        expected = header[0] + 1;
        received++;
        last_arrival = mono_ns();
    }
    double seconds = (double)(last_arrival - first_sent) / 1e9;
    printf("RESULT mode=sub count=%ld received=%ld out_of_order=%ld malformed=%ld timed_out=%d seconds=%.4f "
           "cpu_seconds=%.3f rate=%.0f\n",
           count, received, out_of_order, malformed, timed_out, seconds, cpu_seconds() - cpu0,
           received > 0 && seconds > 0 ? (double)received / seconds : 0.0);
    fflush(stdout);
    zmq_msg_close(&frame);
    set_int(sync, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zmq_close(sync);
    zmq_close(sub);
    zmq_ctx_term(context);
    return received == count && malformed == 0 ? 0 : 1;
}

static int run_proxy(const char *front_ep, const char *back_ep, int hwm) {
    void *context = zmq_ctx_new();
    void *front = zmq_socket(context, ZMQ_XSUB);
    void *back = zmq_socket(context, ZMQ_XPUB);
    set_int(front, ZMQ_RCVHWM, hwm, "front ZMQ_RCVHWM");
    set_int(back, ZMQ_SNDHWM, hwm, "back ZMQ_SNDHWM");
    check(zmq_bind(front, front_ep), front_ep);
    check(zmq_bind(back, back_ep), back_ep);
    printf("RESULT mode=proxy front=%s back=%s\n", front_ep, back_ep);
    fflush(stdout);
    zmq_proxy(front, back, NULL); /* returns only when the context ends */
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 7 && strcmp(argv[1], "pub") == 0)
        return run_pub(argv[2], argv[3], atol(argv[4]), atoi(argv[5]), argv[6]);
    if (argc == 7 && strcmp(argv[1], "sub") == 0)
        return run_sub(argv[2], argv[3], atol(argv[4]), atoi(argv[5]), argv[6]);
    if (argc == 5 && strcmp(argv[1], "proxy") == 0)
        return run_proxy(argv[2], argv[3], atoi(argv[4]));
    fprintf(stderr,
            "usage: zmq_baseline pub|sub DATA_EP SYNC_EP COUNT HWM bind|connect\n"
            "       zmq_baseline proxy FRONT_EP BACK_EP HWM\n");
    return 2;
}
