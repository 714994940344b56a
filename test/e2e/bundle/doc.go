// Package bundle tests `kubedra bundle` and `kubedra bundle verify` on a real
// control plane: the DaemonSet controller's placement of device-plugin and
// DRA-driver pods over fake nodes in two pools, through the cutover and its
// rollback.
package bundle
