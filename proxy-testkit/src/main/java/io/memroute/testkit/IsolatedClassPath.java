package io.memroute.testkit;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The test's class path without some of its jars, in a class loader of its own: proves that classes
 * load, that frameworks can introspect them, and that code runs without a library's optional
 * dependencies. The loader's parent is the platform class loader, so nothing comes from the test's
 * own class loader (where the optional jars are); code run in it is reached by reflection, and only
 * JDK types (strings) should cross.
 *
 * <pre>{@code
 * try (IsolatedClassPath noMicrometer = IsolatedClassPath.without("micrometer-")) {
 *     Map<String, String> problems =
 *         noMicrometer.introspect(noMicrometer.publicClasses("io.memroute"));
 * }
 * }</pre>
 *
 * <p>Not thread-safe. {@link #close()} closes the class loader.
 */
public final class IsolatedClassPath implements AutoCloseable {
  private static final int ACC_PUBLIC = 0x0001;

  private final List<Path> entries;
  private final URLClassLoader loader;
  private final Map<String, String> unloadable = new HashMap<>();

  private IsolatedClassPath(List<Path> entries) {
    this.entries = entries;
    URL[] urls = new URL[entries.size()];
    for (int i = 0; i < urls.length; i++) {
      try {
        urls[i] = entries.get(i).toUri().toURL();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    this.loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
  }

  /**
   * Returns the test's class path (surefire's {@code surefire.test.class.path}, else {@code
   * java.class.path}) without the jars whose file name starts with one of {@code jarPrefixes}, e.g.
   * {@code "micrometer-"}.
   *
   * @throws IllegalArgumentException if a prefix matches no jar: the test would then prove nothing
   */
  public static IsolatedClassPath without(String... jarPrefixes) {
    String path = System.getProperty("surefire.test.class.path");
    if (path == null) {
      path = System.getProperty("java.class.path");
    }
    List<Path> kept = new ArrayList<>();
    Set<String> unmatched = new LinkedHashSet<>(Arrays.asList(jarPrefixes));
    for (String entry : path.split(File.pathSeparator)) {
      if (entry.isEmpty()) {
        continue;
      }
      Path p = Path.of(entry);
      String name = p.getFileName().toString();
      boolean excluded = false;
      for (String prefix : jarPrefixes) {
        if (name.endsWith(".jar") && name.startsWith(prefix)) {
          unmatched.remove(prefix);
          excluded = true;
        }
      }
      if (!excluded) {
        kept.add(p);
      }
    }
    if (!unmatched.isEmpty()) {
      throw new IllegalArgumentException(
          "jarPrefixes: "
              + unmatched
              + " (expected: each the start of a jar's name on "
              + path
              + ")");
    }
    return new IsolatedClassPath(kept);
  }

  /** The class loader over the remaining entries (parent: the platform class loader). */
  public ClassLoader loader() {
    return loader;
  }

  /**
   * Returns the names of the public classes (nested ones too, not anonymous or local ones) directly
   * in {@code packages}, from the main class directories and jars of the class path: test classes
   * ({@code test-classes}, {@code *-tests.jar}) are left out.
   */
  public Set<String> publicClasses(String... packages) {
    Set<String> names = new TreeSet<>();
    for (Path entry : entries) {
      String file = entry.getFileName().toString();
      if (file.equals("test-classes") || file.endsWith("-tests.jar")) {
        continue;
      }
      for (String pkg : packages) {
        String dir = pkg.replace('.', '/') + "/";
        for (String classFile : classFiles(entry, dir)) {
          String name = classFile.substring(0, classFile.length() - ".class".length());
          String simple = name.substring(dir.length());
          if (simple.contains("/")
              || simple.equals("package-info")
              || simple.equals("module-info")
              || simple.matches(".*\\$[0-9].*")) {
            continue;
          }
          if ((read(classFile).access & ACC_PUBLIC) != 0) {
            names.add(name.replace('/', '.'));
          }
        }
      }
    }
    return names;
  }

  /**
   * Introspects each class as frameworks do with a bean's class ({@code getDeclaredMethods()},
   * {@code getDeclaredFields()}, {@code getDeclaredConstructors()} and their generic types) and
   * returns the problems by class name, empty if there are none. A problem names what failed and,
   * read from the class file, each member (or supertype) whose signature names a class this loader
   * cannot load, with why.
   */
  public Map<String, String> introspect(Iterable<String> classNames) {
    Map<String, String> problems = new TreeMap<>();
    for (String name : classNames) {
      String failure = introspect(name);
      if (failure != null) {
        String resource = name.replace('.', '/') + ".class";
        List<String> members = new ArrayList<>();
        ClassFile cf = read(resource);
        for (String type : cf.supertypes) {
          String why = unloadable(type);
          if (why != null) {
            members.add("extends/implements " + type + " (" + why + ")");
          }
        }
        // a missing supertype says it all: the members would only repeat it
        if (members.isEmpty()) {
          for (Map.Entry<String, Set<String>> member : cf.members.entrySet()) {
            for (String type : member.getValue()) {
              String why = unloadable(type);
              if (why != null) {
                members.add(member.getKey() + " (" + type + ": " + why + ")");
              }
            }
          }
        }
        problems.put(name, failure + "; offending: " + (members.isEmpty() ? "?" : members));
      }
    }
    return problems;
  }

  private String introspect(String name) {
    Class<?> c;
    try {
      c = Class.forName(name, false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      return "does not load: " + e;
    }
    try {
      for (Method m : c.getDeclaredMethods()) {
        m.getGenericReturnType();
        m.getGenericParameterTypes();
      }
    } catch (LinkageError | RuntimeException e) {
      return "getDeclaredMethods: " + e;
    }
    try {
      for (Field f : c.getDeclaredFields()) {
        f.getGenericType();
      }
    } catch (LinkageError | RuntimeException e) {
      return "getDeclaredFields: " + e;
    }
    try {
      for (Constructor<?> k : c.getDeclaredConstructors()) {
        k.getGenericParameterTypes();
      }
    } catch (LinkageError | RuntimeException e) {
      return "getDeclaredConstructors: " + e;
    }
    return null;
  }

  /** Why the class does not load, or null if it does. */
  private String unloadable(String name) {
    return unloadable
        .computeIfAbsent(
            name,
            n -> {
              try {
                Class.forName(n, false, loader);
                return "";
              } catch (ClassNotFoundException | LinkageError e) {
                return e.toString();
              }
            })
        .transform(s -> s.isEmpty() ? null : s);
  }

  /**
   * The classes a descriptor or generic signature names (JVMS 4.3, 4.7.9.1): primitives, type
   * variables and identifiers are skipped by the grammar, not guessed at.
   */
  private static final class Types {
    final Set<String> names = new LinkedHashSet<>();
    private final String s;
    private int pos;

    private Types(String s) {
      this.s = s;
    }

    static Set<String> of(String descriptorOrSignature) {
      Types t = new Types(descriptorOrSignature);
      t.member();
      return t.names;
    }

    private void member() {
      if (s.charAt(pos) == '<') { // formal type parameters: T:bound:interface...
        pos++;
        while (s.charAt(pos) != '>') {
          pos = s.indexOf(':', pos);
          while (s.charAt(pos) == ':') {
            pos++;
            if ("L[T".indexOf(s.charAt(pos)) >= 0) {
              type();
            }
          }
        }
        pos++;
      }
      if (s.charAt(pos) == '(') {
        pos++;
        while (s.charAt(pos) != ')') {
          type();
        }
        pos++;
        type(); // the return type
        while (pos < s.length() && s.charAt(pos) == '^') {
          pos++;
          type();
        }
      } else {
        type();
      }
    }

    private void type() {
      char c = s.charAt(pos);
      if (c == '[') {
        pos++;
        type();
      } else if (c == 'T') {
        pos = s.indexOf(';', pos) + 1;
      } else if (c == 'L') {
        int start = ++pos;
        while (";<".indexOf(s.charAt(pos)) < 0) {
          pos++;
        }
        names.add(s.substring(start, pos).replace('/', '.'));
        typeArguments();
        while (s.charAt(pos) == '.') { // an inner class of a parameterized outer one
          while (";<".indexOf(s.charAt(pos)) < 0) {
            pos++;
          }
          typeArguments();
        }
        pos++; // ';'
      } else {
        pos++; // a primitive or void
      }
    }

    private void typeArguments() {
      if (s.charAt(pos) != '<') {
        return;
      }
      pos++;
      while (s.charAt(pos) != '>') {
        char c = s.charAt(pos);
        if (c == '*') {
          pos++;
        } else {
          if (c == '+' || c == '-') {
            pos++;
          }
          type();
        }
      }
      pos++;
    }
  }

  private List<String> classFiles(Path entry, String dir) {
    List<String> files = new ArrayList<>();
    if (Files.isDirectory(entry)) {
      Path d = entry.resolve(dir);
      if (Files.isDirectory(d)) {
        try (Stream<Path> list = Files.list(d)) {
          list.map(p -> dir + p.getFileName())
              .filter(f -> f.endsWith(".class"))
              .forEach(files::add);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    } else if (entry.toString().endsWith(".jar") && Files.isRegularFile(entry)) {
      try (JarFile jar = new JarFile(entry.toFile())) {
        for (JarEntry e : (Iterable<JarEntry>) jar.stream()::iterator) {
          if (e.getName().startsWith(dir) && e.getName().endsWith(".class")) {
            files.add(e.getName());
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return files;
  }

  private ClassFile read(String resource) {
    try (InputStream in = loader.getResourceAsStream(resource)) {
      Objects.requireNonNull(in, resource);
      return ClassFile.read(new DataInputStream(in));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Closes the class loader. Idempotent. */
  @Override
  public void close() {
    try {
      loader.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * What a class file says of the class's signatures: its access flags, supertypes, and each member
   * ({@code "kind name descriptor"}) with the classes its descriptor and generic signature name
   * (JVMS 4). No reflection, so it reads classes that do not load.
   */
  private static final class ClassFile {
    int access;
    final List<String> supertypes = new ArrayList<>();
    final Map<String, Set<String>> members = new LinkedHashMap<>();

    static ClassFile read(DataInputStream in) throws IOException {
      ClassFile cf = new ClassFile();
      in.readInt(); // magic
      in.readInt(); // minor, major
      int count = in.readUnsignedShort();
      String[] utf8 = new String[count];
      int[] classNames = new int[count];
      for (int i = 1; i < count; i++) {
        int tag = in.readUnsignedByte();
        switch (tag) {
          case 1 -> utf8[i] = in.readUTF();
          case 7 -> classNames[i] = in.readUnsignedShort();
          case 8, 16, 19, 20 -> in.readUnsignedShort();
          case 15 -> {
            in.readUnsignedByte();
            in.readUnsignedShort();
          }
          case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt();
          case 5, 6 -> {
            in.readLong();
            i++; // takes two slots
          }
          default -> throw new IOException("constant pool tag " + tag);
        }
      }
      cf.access = in.readUnsignedShort();
      in.readUnsignedShort(); // this class
      int superClass = in.readUnsignedShort();
      if (superClass != 0) {
        cf.supertypes.add(utf8[classNames[superClass]].replace('/', '.'));
      }
      for (int n = in.readUnsignedShort(); n > 0; n--) {
        cf.supertypes.add(utf8[classNames[in.readUnsignedShort()]].replace('/', '.'));
      }
      for (String kind : new String[] {"field", "method"}) {
        for (int n = in.readUnsignedShort(); n > 0; n--) {
          in.readUnsignedShort(); // access
          String name = utf8[in.readUnsignedShort()];
          String descriptor = utf8[in.readUnsignedShort()];
          String member = kind + " " + name + " " + descriptor;
          Set<String> types = new LinkedHashSet<>(Types.of(descriptor));
          for (int a = in.readUnsignedShort(); a > 0; a--) {
            String attribute = utf8[in.readUnsignedShort()];
            int length = in.readInt();
            if (attribute.equals("Signature")) {
              types.addAll(Types.of(utf8[in.readUnsignedShort()]));
            } else {
              in.skipNBytes(length);
            }
          }
          cf.members.put(member, types);
        }
      }
      return cf;
    }
  }
}
