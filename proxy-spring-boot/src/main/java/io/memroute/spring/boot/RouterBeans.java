package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;

/** The router beans that meters and health cover. */
final class RouterBeans {
  private RouterBeans() {}

  /**
   * The singleton {@link MemcacheRouter} beans by name, created if lazy. Not a prototype's (or
   * another scope's): an instance made here would be nobody's, connected and never closed, since
   * Spring does not close prototypes.
   */
  static Map<String, MemcacheRouter> singletons(ListableBeanFactory beans) {
    Map<String, MemcacheRouter> routers = new LinkedHashMap<>();
    for (String name : beans.getBeanNamesForType(MemcacheRouter.class, false, true)) {
      routers.put(name, beans.getBean(name, MemcacheRouter.class));
    }
    return routers;
  }
}
