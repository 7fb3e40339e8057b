/**
 * Internal implementation classes shared between memroute modules. <b>Not a supported API:</b>
 * anything here may change or disappear in any release.
 */
package io.memroute.core.internal;
