package io.memroute.spring.boot;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * An application with nothing of its own: every bean comes from the auto-configurations on the
 * class path (memroute's, Actuator's metrics and health).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class TestApplication {}
