package io.memroute.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Item;
import io.memroute.core.Request;
import java.util.List;
import org.junit.jupiter.api.Test;

class MultigetTest {
  @Test
  void keyBoundsOfItsKeysFindsEachKeyAsKeyBoundsDoes() {
    Request r = Request.parse("gat +5 ab c def", null);

    int[] at = Multiget.keyBoundsOfItsKeys(r, r.keys());

    assertThat(at).containsExactly(7, 9, 10, 11, 12, 15);
    assertThat(at).containsExactly(Multiget.keyBounds(r.wireLine(), r.keyCount()));
  }

  @Test
  void keyBoundsOfItsKeysAcceptsAReplacementCharacterTheLineSpells() {
    Request r = Request.getMulti(List.of("a", "\uFFFDb"));

    assertThat(Multiget.keyBoundsOfItsKeys(r, r.keys())).containsExactly(4, 5, 6, 10);
    assertThat(Multiget.namesItsKeys(r, r.keys())).isTrue();
  }

  @Test
  void keyBoundsOfItsKeysIsNullWhenAKeysBytesAreNotUtf8() {
    // the key 0xff 'b' parses to the string U+FFFD "b", whose UTF-8 is another key
    Request r = Request.parse(new byte[] {'g', 'e', 't', ' ', 'a', ' ', (byte) 0xff, 'b'}, null);

    assertThat(r.keys()).containsExactly("a", "\uFFFDb");
    assertThat(Multiget.keyBoundsOfItsKeys(r, r.keys())).isNull();
    assertThat(Multiget.namesItsKeys(r, r.keys())).isFalse();
  }

  @Test
  void missedIsTheKeysNoItemHoldsEachOnceInOrder() {
    List<Item> items = List.of(Item.of("b", new byte[] {1}, 0, 0));

    assertThat(Multiget.missed(List.of("c", "b", "a", "c"), items)).containsExactly("c", "a");
    assertThat(Multiget.missed(List.of("b", "b"), items)).isEmpty();
    assertThat(Multiget.missed(List.of("a", "a"), List.of())).containsExactly("a");
  }
}
