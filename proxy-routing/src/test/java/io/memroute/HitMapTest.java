package io.memroute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

/** {@link HitMap} behaves as an unmodifiable {@link LinkedHashMap} of the same entries. */
class HitMapTest {
  private static HitMap<String> hitMap(Map<String, String> entries) {
    Object[] table = new Object[2 * entries.size()];
    int i = 0;
    for (Map.Entry<String, String> e : entries.entrySet()) {
      table[i++] = e.getKey();
      table[i++] = e.getValue();
    }
    return new HitMap<>(table, entries.size());
  }

  /** Sizes below and above the in-order search, keys that collide in the index. */
  @Test
  void actsLikeALinkedHashMapOfItsEntries() {
    for (int n = 0; n <= 40; n++) {
      Map<String, String> expected = new LinkedHashMap<>();
      for (int i = 0; i < n; i++) {
        // "Aa" and "BB" have the same hash code: every pair of keys collides
        expected.put((i % 2 == 0 ? "Aa" : "BB") + (i / 2), i == 3 ? null : "v" + i);
      }
      HitMap<String> map = hitMap(expected);
      assertThat(map).as("size %d", n).isEqualTo(expected);
      assertThat(expected).isEqualTo(map);
      assertThat(map.hashCode()).isEqualTo(expected.hashCode());
      assertThat(map.toString()).isEqualTo(expected.toString());
      assertThat(map.size()).isEqualTo(n);
      assertThat(map.isEmpty()).isEqualTo(n == 0);
      assertThat(new ArrayList<>(map.keySet())).isEqualTo(new ArrayList<>(expected.keySet()));
      assertThat(new ArrayList<>(map.values())).isEqualTo(new ArrayList<>(expected.values()));
      List<String> visited = new ArrayList<>();
      map.forEach((k, v) -> visited.add(k + "=" + v));
      assertThat(visited).hasSize(n);
      for (String k : expected.keySet()) {
        assertThat(map.get(k)).isEqualTo(expected.get(k));
        assertThat(map.get(new String(k))).isEqualTo(expected.get(k)); // equal, not the same
        assertThat(map.containsKey(k)).isTrue();
      }
      assertThat(map.get("absent")).isNull();
      assertThat(map.containsKey("Aa" + n)).isFalse();
      assertThat(map.containsKey(42)).isFalse();
      assertThat(map.containsKey(null)).isFalse();
      assertThat(map.containsValue("v0")).isEqualTo(n > 0);
      assertThat(map.getOrDefault("absent", "d")).isEqualTo("d");
    }
  }

  @Test
  void serializesAsAnUnmodifiableLinkedHashMap() throws Exception {
    Map<String, String> entries = new LinkedHashMap<>();
    entries.put("b", "2");
    entries.put("a", null);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(hitMap(entries));
    }
    Object copy = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray())).readObject();
    assertThat(copy).isEqualTo(entries);
    assertThat(new ArrayList<Object>(((Map<?, ?>) copy).keySet())).containsExactly("b", "a");
  }

  @Test
  void isUnmodifiable() {
    Map<String, String> entries = new LinkedHashMap<>();
    entries.put("a", "1");
    entries.put("b", "2");
    HitMap<String> map = hitMap(entries);
    assertThatThrownBy(() -> map.put("c", "3")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.remove("absent"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(map::clear).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.putAll(Map.of()))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.merge("a", "x", (x, y) -> y))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.computeIfAbsent("a", k -> "x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.replaceAll((k, v) -> v))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.entrySet().iterator().next().setValue("x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.keySet().remove("a"))
        .isInstanceOf(UnsupportedOperationException.class);
    Iterator<Map.Entry<String, String>> it = map.entrySet().iterator();
    it.next();
    assertThatThrownBy(it::remove).isInstanceOf(UnsupportedOperationException.class);
    it.next();
    assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);
    assertThat(map).isEqualTo(entries);
  }
}
