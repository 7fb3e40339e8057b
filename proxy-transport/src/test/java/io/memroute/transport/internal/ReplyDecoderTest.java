package io.memroute.transport.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every reply type through the real decoder in an EmbeddedChannel: whole, byte by byte, and at
 * random splits.
 */
class ReplyDecoderTest {
  enum Split {
    WHOLE,
    BYTE_BY_BYTE,
    RANDOM
  }

  /** Collects what the decoder delivers for a queue of requests. */
  static final class Sink implements ReplySink {
    final ArrayDeque<Request> inflight = new ArrayDeque<>();
    final List<Response> replies = new ArrayList<>();
    ReplyParser.ProtocolError error;

    @Override
    public Request oldest() {
      return inflight.peek();
    }

    @Override
    public long oldestStartNanos() {
      return 100;
    }

    @Override
    public long now() {
      return 107;
    }

    @Override
    public boolean onReply(Response response) {
      inflight.poll();
      replies.add(response);
      return true;
    }

    @Override
    public void onProtocolError(ReplyParser.ProtocolError e) {
      error = e;
    }
  }

  private static final Random RANDOM = new Random(42);

  private static Sink decode(Split split, String wire, Request... requests) {
    return decode(split, wire.getBytes(UTF_8), requests);
  }

  private static Sink decode(Split split, byte[] wire, Request... requests) {
    Sink sink = new Sink();
    sink.inflight.addAll(Arrays.asList(requests));
    EmbeddedChannel ch =
        new EmbeddedChannel(new ReplyDecoder(sink, new ReplyParser("mc1", 1024 * 1024)));
    int i = 0;
    while (i < wire.length) {
      int n;
      switch (split) {
        case WHOLE:
          n = wire.length;
          break;
        case BYTE_BY_BYTE:
          n = 1;
          break;
        default:
          n = 1 + RANDOM.nextInt(Math.max(1, Math.min(wire.length - i, 40)));
      }
      n = Math.min(n, wire.length - i);
      ch.writeInbound(Unpooled.wrappedBuffer(wire, i, n));
      i += n;
    }
    assertThat(ch.finish()).isFalse();
    return sink;
  }

  private static Response single(Split split, String wire, Request request) {
    Sink s = decode(split, wire, request);
    assertThat(s.error).as("protocol error").isNull();
    assertThat(s.replies).hasSize(1);
    Response r = s.replies.get(0);
    assertThat(r.backend()).isEqualTo("mc1");
    assertThat(r.elapsedNanos()).isEqualTo(7);
    return r;
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void textReplies(Split split) {
    Response hit = single(split, "VALUE k 5 3\r\nabc\r\nEND\r\n", Request.get("k"));
    assertThat(hit.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(hit.valueAsString()).isEqualTo("abc");
    assertThat(hit.flags()).isEqualTo(5);
    assertThat(hit.key()).isEqualTo("k");

    Response gets =
        single(
            split, "VALUE k 4294967295 0 18446744073709551615\r\n\r\nEND\r\n", Request.gets("k"));
    assertThat(gets.flags()).isEqualTo(-1);
    assertThat(gets.cas()).isEqualTo(-1L);
    assertThat(gets.value()).isEmpty();

    assertThat(single(split, "END\r\n", Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(single(split, "STORED\r\n", Request.set("k", new byte[1], 0)).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(single(split, "NOT_STORED\r\n", Request.add("k", new byte[1], 0)).status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(single(split, "EXISTS\r\n", Request.cas("k", new byte[1], 0, 9)).status())
        .isEqualTo(ResponseStatus.EXISTS);
    assertThat(single(split, "NOT_FOUND\r\n", Request.cas("k", new byte[1], 0, 9)).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(single(split, "DELETED\r\n", Request.delete("k")).status())
        .isEqualTo(ResponseStatus.DELETED);
    assertThat(single(split, "NOT_FOUND\r\n", Request.delete("k")).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(single(split, "TOUCHED\r\n", Request.touch("k", 1)).status())
        .isEqualTo(ResponseStatus.TOUCHED);
    Response num = single(split, "18446744073709551615\r\n", Request.incr("k", 1));
    assertThat(num.status()).isEqualTo(ResponseStatus.NUMERIC);
    assertThat(Long.toUnsignedString(num.number())).isEqualTo("18446744073709551615");
    assertThat(single(split, "NOT_FOUND\r\n", Request.decr("k", 1)).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
    Response v = single(split, "VERSION 1.6.18\r\n", Request.version());
    assertThat(v.status()).isEqualTo(ResponseStatus.VERSION);
    assertThat(v.message()).isEqualTo("1.6.18");
    assertThat(single(split, "OK\r\n", Request.flushAll()).status()).isEqualTo(ResponseStatus.OK);
    assertThat(single(split, "OK\r\n", Request.verbosity(1)).status()).isEqualTo(ResponseStatus.OK);
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void errorReplies(Split split) {
    Response se =
        single(
            split,
            "SERVER_ERROR out of memory storing object\r\n",
            Request.set("k", new byte[1], 0));
    assertThat(se.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(se.message()).isEqualTo("out of memory storing object");
    Response ce = single(split, "CLIENT_ERROR bad data chunk\r\n", Request.get("k"));
    assertThat(ce.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(ce.line()).isEqualTo("CLIENT_ERROR bad data chunk");
    assertThat(single(split, "ERROR\r\n", Request.metaGet("k", "v")).status())
        .isEqualTo(ResponseStatus.ERROR);
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void multiValueReplyInKeyOrder(Split split) {
    Request r = Request.getMulti(List.of("a", "b", "c", "d"));
    Response hit =
        single(split, "VALUE a 0 1\r\n1\r\nVALUE c 1 2\r\n33\r\nVALUE d 0 0\r\n\r\nEND\r\n", r);
    assertThat(hit.items()).extracting(it -> it.key()).containsExactly("a", "c", "d");
    assertThat(hit.items()).extracting(it -> it.valueAsString()).containsExactly("1", "33", "");
    assertThat(hit.items().get(1).flags()).isEqualTo(1);
  }

  /**
   * VALUE keys are matched against the request line's bytes: keys that are prefixes of each other,
   * UTF-8 keys, gat's TTL before the keys, and the caller's own strings in the items.
   */
  @ParameterizedTest
  @EnumSource(Split.class)
  void multiValueKeysMatchedByTheirBytes(Split split) {
    String utf8 = "clé:ü";
    List<String> keys = List.of("ab", "a", "abc", utf8, "z");
    Request r = Request.getMulti(keys);
    Response hit =
        single(
            split,
            "VALUE a 0 1\r\n1\r\nVALUE abc 0 1\r\n3\r\nVALUE " + utf8 + " 0 1\r\nu\r\nEND\r\n",
            r);
    assertThat(hit.items()).extracting(Item::key).containsExactly("a", "abc", utf8);
    assertThat(hit.items().get(2).key()).isSameAs(keys.get(3));

    Response gat =
        single(
            split,
            "VALUE k2 0 1\r\nx\r\nVALUE k3 5 1 77\r\ny\r\nEND\r\n",
            Request.retrieval(io.memroute.core.Command.GATS, 300, List.of("k1", "k2", "k3")));
    assertThat(gat.items()).extracting(Item::key).containsExactly("k2", "k3");
    assertThat(gat.items().get(1).cas()).isEqualTo(77);
    assertThat(gat.items().get(1).flags()).isEqualTo(5);

    // the same request answered twice on one connection: the key cursor starts over each time
    Sink s =
        decode(
            split,
            "VALUE b 0 1\r\nB\r\nEND\r\nVALUE a 0 1\r\nA\r\nVALUE b 0 1\r\nB\r\nEND\r\n",
            Request.getMulti(List.of("a", "b")),
            Request.getMulti(List.of("a", "b")));
    assertThat(s.replies.get(0).items()).extracting(Item::key).containsExactly("b");
    assertThat(s.replies.get(1).items()).extracting(Item::key).containsExactly("a", "b");
  }

  /** The word-at-a-time search finds the first LF at every position, next to look-alike bytes. */
  @Test
  void findsTheFirstLineFeedAtEveryPosition() {
    byte[] noise = {0x0b, 0x09, (byte) 0x8a, 0x0c, 0x1a, (byte) 0xff, 0x00, 0x0d};
    for (int len = 0; len <= 40; len++) {
      for (int from = 0; from <= 3 && from <= len; from++) {
        byte[] a = new byte[len];
        for (int i = 0; i < len; i++) {
          a[i] = noise[i % noise.length];
        }
        assertThat(ReplyParser.indexOfLf(a, from, len)).isEqualTo(-1);
        for (int lf = from; lf < len; lf++) {
          byte[] b = a.clone();
          b[lf] = '\n';
          if (lf + 1 < len) {
            b[lf + 1] = '\n'; // a second one after it: the first still wins
          }
          assertThat(ReplyParser.indexOfLf(b, from, len)).as("len %d lf %d", len, lf).isEqualTo(lf);
        }
      }
    }
  }

  /** Lines longer than the parser's first copy: 250-byte keys, a gat with many of them. */
  @ParameterizedTest
  @EnumSource(Split.class)
  void longLines(Split split) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      keys.add(String.valueOf((char) ('a' + i)).repeat(250));
    }
    StringBuilder wire = new StringBuilder();
    for (String k : keys) {
      wire.append("VALUE ").append(k).append(" 4294967295 3 18446744073709551615\r\nabc\r\n");
    }
    Response hit = single(split, wire + "END\r\n", Request.getsMulti(keys));
    assertThat(hit.items()).extracting(Item::key).containsExactlyElementsOf(keys);
    assertThat(hit.items()).allSatisfy(it -> assertThat(it.valueAsString()).isEqualTo("abc"));
    assertThat(hit.items().get(2).cas()).isEqualTo(-1L);
  }

  /**
   * Random multigets (keys of 1-81 chars, ASCII or not, some prefixes of others; random hits,
   * flags, CAS values and values), several in a row on one connection, split at random: every hit
   * comes back under its key (the caller's own string when several were asked) with its flags, CAS
   * and bytes.
   */
  @Test
  void randomMultigetsMatchTheirKeys() {
    Random rnd = new Random(7);
    String alphabet = "abcxyz019:_-/.\u00e9\u20ac";
    for (int round = 0; round < 300; round++) {
      List<Request> requests = new ArrayList<>();
      List<List<Item>> expected = new ArrayList<>();
      java.io.ByteArrayOutputStream wire = new java.io.ByteArrayOutputStream();
      for (int r = 0; r < 1 + rnd.nextInt(3); r++) {
        java.util.LinkedHashSet<String> keySet = new java.util.LinkedHashSet<>();
        int n = 1 + rnd.nextInt(12);
        while (keySet.size() < n) {
          int len = rnd.nextInt(10) == 0 ? 1 + rnd.nextInt(80) : 1 + rnd.nextInt(4); // <= 250 bytes
          StringBuilder k = new StringBuilder();
          for (int i = 0; i < len; i++) {
            k.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
          }
          keySet.add(k.toString());
          if (rnd.nextInt(4) == 0) {
            keySet.add(k + "a"); // a key that another key is a prefix of
          }
        }
        List<String> keys = new ArrayList<>(keySet);
        boolean gets = rnd.nextBoolean();
        List<Item> hits = new ArrayList<>();
        for (String k : keys) {
          if (rnd.nextInt(3) > 0) {
            byte[] value = new byte[rnd.nextInt(30)];
            rnd.nextBytes(value);
            int flags = rnd.nextInt(1 << 16);
            long cas = gets ? 1 + rnd.nextInt(1_000_000) : 0;
            hits.add(Item.of(k, value, flags, cas));
            String line =
                "VALUE " + k + " " + flags + " " + value.length + (gets ? " " + cas : "") + "\r\n";
            wire.writeBytes(line.getBytes(UTF_8));
            wire.writeBytes(value);
            wire.writeBytes("\r\n".getBytes(UTF_8));
          }
        }
        wire.writeBytes("END\r\n".getBytes(UTF_8));
        requests.add(gets ? Request.getsMulti(keys) : Request.getMulti(keys));
        expected.add(hits);
      }
      Split split = Split.values()[round % Split.values().length];
      Sink s = decode(split, wire.toByteArray(), requests.toArray(new Request[0]));
      assertThat(s.error).as("round %d", round).isNull();
      assertThat(s.replies).hasSize(requests.size());
      for (int r = 0; r < requests.size(); r++) {
        List<Item> want = expected.get(r);
        List<Item> got = s.replies.get(r).items();
        assertThat(got).as("round %d reply %d", round, r).hasSize(want.size());
        for (int i = 0; i < want.size(); i++) {
          assertThat(got.get(i).key()).isEqualTo(want.get(i).key());
          if (requests.get(r).keyCount() > 1) {
            assertThat(got.get(i).key()).isSameAs(want.get(i).key()); // no decoding per hit
          }
          assertThat(got.get(i).value()).isEqualTo(want.get(i).value());
          assertThat(got.get(i).flags()).isEqualTo(want.get(i).flags());
          assertThat(got.get(i).cas()).isEqualTo(want.get(i).cas());
        }
      }
    }
  }

  @Test
  void valueLinesThatDoNotMatchTheRequestFail() {
    Request r = Request.getMulti(List.of("ab", "c"));
    // a requested key's prefix, a key not asked for, keys out of order, a key asked for once twice
    assertThat(failure("VALUE a 0 1\r\nx\r\nEND\r\n", r))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("VALUE abc 0 1\r\nx\r\nEND\r\n", r))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("VALUE c 0 1\r\nx\r\nVALUE ab 0 1\r\ny\r\nEND\r\n", r))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("VALUE ab 0 1\r\nx\r\nVALUE ab 0 1\r\ny\r\nEND\r\n", r))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("VALUE k\r\n", Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0\r\n", Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k  1\r\n", Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0 1 \r\n", Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0 1 2 3\r\n", Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 4294967296 1\r\n", Request.get("k")))
        .isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0 1 99999999999999999999\r\n", Request.gets("k")))
        .isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0 1 123456789012345678901\r\n", Request.gets("k")))
        .isEqualTo(FailureReason.PARSING);
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void metaReplies(Split split) {
    Response va =
        single(
            split,
            "VA 2 f3 c99 t-1 kk Oxy\r\nhi\r\n",
            Request.metaGet("k", "v", "f", "c", "t", "k", "Oxy"));
    assertThat(va.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(va.valueAsString()).isEqualTo("hi");
    assertThat(va.flags()).isEqualTo(3);
    assertThat(va.cas()).isEqualTo(99);
    assertThat(va.flagToken('t')).isEqualTo("-1");
    assertThat(va.line()).isEqualTo("VA 2 f3 c99 t-1 kk Oxy");
    Response hd = single(split, "HD t30\r\n", Request.metaGet("k", "t"));
    assertThat(hd.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(hd.value()).isNull();
    assertThat(hd.flagToken('t')).isEqualTo("30");
    assertThat(single(split, "EN\r\n", Request.metaGet("k", "v")).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(single(split, "HD\r\n", Request.metaSet("k", new byte[2])).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(single(split, "NS\r\n", Request.metaSet("k", new byte[2], "ME")).status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(single(split, "EX\r\n", Request.metaSet("k", new byte[2], "C5")).status())
        .isEqualTo(ResponseStatus.EXISTS);
    assertThat(single(split, "NF\r\n", Request.metaSet("k", new byte[2], "MR")).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(single(split, "HD\r\n", Request.metaDelete("k")).status())
        .isEqualTo(ResponseStatus.DELETED);
    assertThat(single(split, "NF\r\n", Request.metaDelete("k")).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
    Response ma = single(split, "VA 2\r\n42\r\n", Request.metaArithmetic("k", "v"));
    assertThat(ma.status()).isEqualTo(ResponseStatus.NUMERIC);
    assertThat(ma.number()).isEqualTo(42);
    assertThat(single(split, "HD\r\n", Request.metaArithmetic("k")).status())
        .isEqualTo(ResponseStatus.OK);
    assertThat(single(split, "NF\r\n", Request.metaArithmetic("k")).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(single(split, "MN\r\n", Request.metaNoop()).status()).isEqualTo(ResponseStatus.NOOP);
    Response me =
        single(split, "ME k exp=-1 la=2 cas=3 fetch=no cls=1 size=63\r\n", Request.metaDebug("k"));
    assertThat(me.status()).isEqualTo(ResponseStatus.DEBUG);
    assertThat(me.message()).startsWith("k exp=-1");
    assertThat(single(split, "EN\r\n", Request.metaDebug("k")).status())
        .isEqualTo(ResponseStatus.MISS);
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void pipelinedRepliesMatchFifo(Split split) {
    Sink s =
        decode(
            split,
            "STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\nEND\r\nDELETED\r\n42\r\nHD\r\n",
            Request.set("a", new byte[] {'x'}, 0),
            Request.get("a"),
            Request.get("b"),
            Request.delete("a"),
            Request.incr("n", 1),
            Request.metaSet("m", new byte[0]));
    assertThat(s.error).isNull();
    assertThat(s.replies)
        .extracting(Response::status)
        .containsExactly(
            ResponseStatus.STORED,
            ResponseStatus.HIT,
            ResponseStatus.MISS,
            ResponseStatus.DELETED,
            ResponseStatus.NUMERIC,
            ResponseStatus.STORED);
  }

  @Test
  void largeValueAcrossManyReads() {
    byte[] value = new byte[1024 * 1024];
    new Random(1).nextBytes(value);
    byte[] head = ("VALUE big 0 " + value.length + "\r\n").getBytes(UTF_8);
    byte[] wire = concat(head, value, "\r\nEND\r\n".getBytes(UTF_8));
    for (Split split : new Split[] {Split.WHOLE, Split.RANDOM}) {
      Sink s = new Sink();
      s.inflight.add(Request.get("big"));
      EmbeddedChannel ch =
          new EmbeddedChannel(new ReplyDecoder(s, new ReplyParser("mc1", 1024 * 1024)));
      for (int i = 0; i < wire.length; i += 7919) {
        ch.writeInbound(Unpooled.wrappedBuffer(wire, i, Math.min(7919, wire.length - i)));
      }
      assertThat(s.replies).hasSize(1);
      assertThat(s.replies.get(0).value()).isEqualTo(value);
      ch.finish();
    }
  }

  @Test
  void partOfAValueIsCopiedOutAtOnceSoTheDecoderHoldsNoBytes() {
    byte[] value = new byte[4096];
    new Random(2).nextBytes(value);
    for (Request request : new Request[] {Request.get("k"), Request.metaGet("k", "v")}) {
      String head = request.command().isMeta() ? "VA 4096\r\n" : "VALUE k 0 4096\r\n";
      String tail = request.command().isMeta() ? "\r\n" : "\r\nEND\r\n";
      byte[] wire = concat(head.getBytes(UTF_8), value, tail.getBytes(UTF_8));
      Sink s = new Sink();
      s.inflight.add(request);
      EmbeddedChannel ch =
          new EmbeddedChannel(new ReplyDecoder(s, new ReplyParser("mc1", 1024 * 1024)));
      int cut = head.length() + 1000;
      ByteBuf first = Unpooled.copiedBuffer(wire, 0, cut);
      ch.writeInbound(first);
      // Fully consumed and released: the decoder does not keep it to append the next read to.
      assertThat(first.refCnt()).as("%s: first read still held", request.command()).isZero();
      assertThat(s.replies).isEmpty();
      ch.writeInbound(Unpooled.copiedBuffer(wire, cut, wire.length - cut - 1));
      assertThat(s.replies).isEmpty(); // the last LF is missing
      ch.writeInbound(Unpooled.copiedBuffer(wire, wire.length - 1, 1));
      assertThat(s.replies).hasSize(1);
      assertThat(s.replies.get(0).value()).isEqualTo(value);
      assertThat(s.error).isNull();
      assertThat(ch.finish()).isFalse();
    }
  }

  @Test
  void aReadEndingInsideALineLeavesNoBytesInTheDecoder() {
    Sink s = new Sink();
    s.inflight.add(Request.set("k", new byte[1], 0));
    s.inflight.add(Request.get("k"));
    EmbeddedChannel ch =
        new EmbeddedChannel(new ReplyDecoder(s, new ReplyParser("mc1", 1024 * 1024)));
    for (String part : new String[] {"STORED\r\nVAL", "UE k 3 ", "2\r", "\nab\r\nEN", "D\r\n"}) {
      ByteBuf read = Unpooled.copiedBuffer(part, UTF_8);
      ch.writeInbound(read);
      assertThat(read.refCnt()).as("'%s' held by the decoder", part).isZero();
    }
    assertThat(s.error).isNull();
    assertThat(s.replies)
        .extracting(Response::status)
        .containsExactly(ResponseStatus.STORED, ResponseStatus.HIT);
    assertThat(s.replies.get(1).value()).isEqualTo("ab".getBytes(UTF_8));
    assertThat(s.replies.get(1).flags()).isEqualTo(3);
    assertThat(ch.finish()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void largeValuesPipelinedWithOtherReplies(Split split) {
    byte[] a = new byte[5000];
    byte[] b = new byte[300];
    new Random(3).nextBytes(a);
    new Random(4).nextBytes(b);
    byte[] wire =
        concat(
            "VALUE a 1 5000\r\n".getBytes(UTF_8),
            a,
            "\r\nVALUE b 2 300\r\n".getBytes(UTF_8),
            b,
            "\r\nEND\r\nSTORED\r\nVA 5000 f7\r\n".getBytes(UTF_8),
            a,
            "\r\nEN\r\n".getBytes(UTF_8));
    Sink s =
        decode(
            split,
            wire,
            Request.getMulti(List.of("a", "b")),
            Request.set("k", new byte[1], 0),
            Request.metaGet("a", "v", "f"),
            Request.metaGet("c", "v"));
    assertThat(s.error).isNull();
    assertThat(s.replies).hasSize(4);
    Response multi = s.replies.get(0);
    assertThat(multi.items()).hasSize(2);
    assertThat(multi.items().get(0).value()).isEqualTo(a);
    assertThat(multi.items().get(1).value()).isEqualTo(b);
    assertThat(multi.items().get(1).flags()).isEqualTo(2);
    assertThat(s.replies.get(1).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(s.replies.get(2).value()).isEqualTo(a);
    assertThat(s.replies.get(2).flags()).isEqualTo(7);
    assertThat(s.replies.get(3).status()).isEqualTo(ResponseStatus.MISS);
  }

  // ---------------------------------------------------------------- desync: never guess

  private static FailureReason failure(String wire, Request... requests) {
    for (Split split : Split.values()) {
      Sink s = decode(split, wire, requests);
      assertThat(s.error).as("%s: %s", split, wire).isNotNull();
      FailureReason reason = s.error.reason();
      Sink whole = decode(Split.WHOLE, wire, requests);
      assertThat(whole.error.reason()).isEqualTo(reason);
    }
    return decode(Split.WHOLE, wire, requests).error.reason();
  }

  @Test
  void desyncFailsWithAReason() {
    assertThat(failure("STORED\r\n", Request.get("k")))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("VALUE other 0 1\r\nx\r\nEND\r\n", Request.get("k")))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("VALUE k 0 1\r\nx\r\nSTORED\r\n", Request.get("k")))
        .isEqualTo(FailureReason.MISSING_END);
    assertThat(failure("VALUE k 0 1\r\nxyz\r\nEND\r\n", Request.get("k")))
        .isEqualTo(FailureReason.PARSING);
    assertThat(failure("garbage\r\n", Request.set("k", new byte[1], 0)))
        .isEqualTo(FailureReason.PARSING);
    assertThat(failure("STORED\n", Request.set("k", new byte[1], 0)))
        .isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k x 1\r\nx\r\nEND\r\n", Request.get("k")))
        .isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0 -1\r\n", Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0 2000000\r\n", Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("DELETED\r\n", Request.incr("k", 1)))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("HD Owrong\r\n", Request.metaGet("k", "Oright")))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("VA 1 kother\r\nx\r\n", Request.metaGet("k", "v", "k")))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("STORED\r\nEXTRA\r\n", Request.set("k", new byte[1], 0)))
        .isEqualTo(FailureReason.TRAILING_DATA);
    assertThat(failure("x".repeat(9000), Request.get("k"))).isEqualTo(FailureReason.PARSING);
    assertThat(failure("VALUE k 0 1\r\na\r\nVALUE k 0 1\r\nb\r\nEND\r\n", Request.get("k")))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void aTextKeyOfAnItemStoredUnderABase64KeyComesBackInBase64(Split split) {
    // memcached names the key of an item stored with b in base64, with b, whatever the request
    // used: "mg a:b k v" of such an item answers "VA 1 kYTpi b"; it was taken for a desync
    String b64 = java.util.Base64.getEncoder().encodeToString("a:b".getBytes(UTF_8));
    Response hit = single(split, "VA 1 k" + b64 + " b\r\nx\r\n", Request.metaGet("a:b", "k", "v"));
    assertThat(hit.key()).isEqualTo(b64);
    assertThat(hit.valueAsString()).isEqualTo("x");
    assertThat(single(split, "HD k" + b64 + " b\r\n", Request.metaDelete("a:b", "k")).key())
        .isEqualTo(b64);
    // still a desync: another key in base64, or base64 without b
    String other = java.util.Base64.getEncoder().encodeToString("a:c".getBytes(UTF_8));
    assertThat(failure("HD k" + other + " b\r\n", Request.metaDelete("a:b", "k")))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
    assertThat(failure("HD k" + b64 + "\r\n", Request.metaDelete("a:b", "k")))
        .isEqualTo(FailureReason.UNEXPECTED_RESPONSE);
  }

  /** Decodes UTF-8 and records what it was given. */
  private static final class Utf8 implements ValueDecoder<String> {
    final List<String> seen = new ArrayList<>();

    @Override
    public String decode(ByteBuffer data, int flags) {
      String s = UTF_8.decode(data).toString();
      seen.add(s + "/" + flags);
      return s;
    }
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void aDecoderReadsTheValueInPlaceWhenItArrivedInOneRead(Split split) {
    Utf8 utf8 = new Utf8();
    Response r = single(split, "VALUE k 7 3\r\nabc\r\nEND\r\n", Request.get("k", utf8));
    assertThat(r.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(r.key()).isEqualTo("k");
    assertThat(r.flags()).isEqualTo(7);
    assertThat(r.line()).isEqualTo("VALUE k 7 3");
    switch (split) {
      case WHOLE:
        assertThat(r.decoded()).isEqualTo("abc");
        assertThat(r.value()).isNull();
        assertThat(utf8.seen).containsExactly("abc/7"); // exactly the value's bytes
        break;
      case BYTE_BY_BYTE: // never whole in one read: the bytes come back for the typed API
        assertThat(r.decoded()).isNull();
        assertThat(r.valueAsString()).isEqualTo("abc");
        assertThat(utf8.seen).isEmpty();
        break;
      default:
        assertThat(r.decoded() != null ? r.decoded() : r.valueAsString()).isEqualTo("abc");
    }
    assertThat(single(split, "END\r\n", Request.get("k", utf8)).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(utf8.seen).hasSizeLessThanOrEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(Split.class)
  void aMultigetDecoderReadsEveryItemThatArrivedWhole(Split split) {
    Utf8 utf8 = new Utf8();
    Request r = Request.getMulti(List.of("a", "b", "c"), utf8);
    Response hit = single(split, "VALUE a 1 2\r\naa\r\nVALUE c 3 1\r\nc\r\nEND\r\n", r);
    assertThat(hit.items()).extracting(Item::key).containsExactly("a", "c");
    assertThat(hit.items()).extracting(Item::flags).containsExactly(1, 3);
    assertThat(hit.items())
        .extracting(it -> it.decoded() != null ? it.decoded() : it.valueAsString())
        .containsExactly("aa", "c");
    if (split == Split.WHOLE) {
      assertThat(hit.items()).extracting(Item::value).containsOnlyNulls();
      assertThat(utf8.seen).containsExactly("aa/1", "c/3");
      assertThat(hit.line()).isEqualTo("VALUE a 1 2");
    } else if (split == Split.BYTE_BY_BYTE) {
      assertThat(hit.items()).extracting(Item::decoded).containsOnlyNulls();
    }
    Response one = single(split, "VALUE b 0 1\r\nb\r\nEND\r\n", r);
    assertThat(one.items()).hasSize(1);
    Item b = one.items().get(0);
    assertThat(b.key()).isEqualTo("b");
    assertThat(b.decoded() != null ? b.decoded() : b.valueAsString()).isEqualTo("b");
  }

  @Test
  void aDecoderThatFailsOrAnswersNullGetsTheBytesBackAndTheStreamGoesOn() {
    ValueDecoder<String> throwing =
        (data, flags) -> {
          data.get(); // moves the view's position, not the connection's
          throw new java.io.IOException("not ours");
        };
    ValueDecoder<String> nothing = (data, flags) -> null;
    // An Error too (an assertion in the decoder): thrown on, it would fail the connection and
    // everything pipelined on it, though the value is read whole.
    ValueDecoder<String> asserting =
        (data, flags) -> {
          throw new AssertionError("decoder bug");
        };
    Sink s =
        decode(
            Split.WHOLE,
            "VALUE k 0 3\r\nabc\r\nEND\r\nVALUE k 0 2\r\nde\r\nEND\r\n"
                + "VALUE k 0 1\r\nf\r\nEND\r\nSTORED\r\n",
            Request.get("k", throwing),
            Request.get("k", nothing),
            Request.get("k", asserting),
            Request.set("k", new byte[1], 0));
    assertThat(s.error).isNull();
    assertThat(s.replies).hasSize(4);
    assertThat(s.replies.get(0).decoded()).isNull();
    assertThat(s.replies.get(0).valueAsString()).isEqualTo("abc");
    assertThat(s.replies.get(1).decoded()).isNull();
    assertThat(s.replies.get(1).valueAsString()).isEqualTo("de");
    assertThat(s.replies.get(2).decoded()).isNull();
    assertThat(s.replies.get(2).valueAsString()).isEqualTo("f");
    assertThat(s.replies.get(3).status()).isEqualTo(ResponseStatus.STORED);
  }

  @Test
  void aValueWithoutItsCrlfFailsTheConnectionBeforeTheDecoderSeesIt() {
    Utf8 utf8 = new Utf8();
    Sink s = decode(Split.WHOLE, "VALUE k 0 3\r\nabcdEND\r\n", Request.get("k", utf8));
    assertThat(s.error.reason()).isEqualTo(FailureReason.PARSING);
    assertThat(utf8.seen).isEmpty();
  }

  @Test
  void partialReplyWaitsWithoutDelivering() {
    Sink s = decode(Split.WHOLE, "VALUE k 0 10\r\nabc", Request.get("k"));
    assertThat(s.replies).isEmpty();
    assertThat(s.error).isNull();
  }

  private static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int o = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, o, p.length);
      o += p.length;
    }
    return out;
  }
}
