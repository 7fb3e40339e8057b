/**
 * The Netty implementation of backends: connections, the reply parser, health tracking. <b>Not a
 * supported API:</b> anything here may change in any release.
 */
package io.memroute.transport.internal;
