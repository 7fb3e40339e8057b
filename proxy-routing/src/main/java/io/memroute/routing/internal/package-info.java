/**
 * Routing implementation classes. <b>Not a supported API:</b> anything here may change in any
 * release.
 */
package io.memroute.routing.internal;
