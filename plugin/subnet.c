/*
 * subnet.c - converts OpenSM's discovered subnet (osm_subn_t) into the fabric model, so the
 * engines that route inside OpenSM see exactly what the offline tools see for a net file.
 */
#include <inttypes.h>
#include <string.h>

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_node.h>
#include <opensm/osm_port.h>
#include <opensm/osm_subnet.h>

#include "plugin/subnet.h"

/* PortInfo OperVLs / VLCap encoding (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14). */
static uint8_t vls_from_code(uint8_t code)
{
	static const uint8_t count[] = { 0, 1, 2, 4, 8, 15 };

	return code < sizeof(count) ? count[code] : 0;
}

static void copy_port_state(osm_node_t *node, unsigned num, struct fab_port *fp)
{
	osm_physp_t *physp = osm_node_get_physp_ptr(node, num);
	uint8_t vls;

	if (!physp)
		return;
	fp->guid = cl_ntoh64(osm_physp_get_port_guid(physp));
	fp->state = osm_physp_get_port_state(physp);
	vls = vls_from_code(ib_port_info_get_op_vls(&physp->port_info));
	if (!vls)
		vls = vls_from_code(ib_port_info_get_vl_cap(&physp->port_info));
	fp->op_vls = vls;
	if (osm_node_get_type(node) != IB_NODE_TYPE_SWITCH || num == 0) {
		fp->base_lid = cl_ntoh16(osm_physp_get_base_lid(physp));
		fp->lmc = osm_physp_get_lmc(physp);
	}
	if (osm_node_get_type(node) == IB_NODE_TYPE_SWITCH && num == 0) {
		/* Port 0 of a switch has no link; it is "up" whenever the switch is. */
		fp->state = FAB_PORT_ACTIVE;
		if (!fp->op_vls)
			fp->op_vls = 1;
	}
}

static uint32_t add_osm_node(osm_node_t *node, struct fabric *f)
{
	unsigned nports = osm_node_get_num_physp(node) - 1, k;
	uint64_t guid = cl_ntoh64(osm_node_get_node_guid(node));
	char id[24];
	uint32_t n;

	snprintf(id, sizeof(id), "0x%016" PRIx64, guid);
	n = fabric_add_node(f, (enum fab_node_type)osm_node_get_type(node), guid, nports, id,
			    node->print_desc ? node->print_desc : id);
	if (n == FAB_NONE)
		return n;
	for (k = 0; k <= nports; k++)
		copy_port_state(node, k, fabric_port(f, n, k));
	return n;
}

static int add_links(osm_subn_t *subn, struct fabric *f, const struct fab_guid_map *map,
		     struct fab_error *err)
{
	cl_map_item_t *it;
	uint32_t n = 0;

	for (it = cl_qmap_head(&subn->node_guid_tbl); it != cl_qmap_end(&subn->node_guid_tbl);
	     it = cl_qmap_next(it), n++) {
		osm_node_t *node = (osm_node_t *)it;
		unsigned k;

		for (k = 1; k <= f->nodes[n].nports; k++) {
			uint8_t rport = 0;
			osm_node_t *remote = osm_node_get_remote_node(node, (uint8_t)k, &rport);
			uint32_t rn;

			if (!remote)
				continue;
			rn = fab_guid_map_get(map, cl_ntoh64(osm_node_get_node_guid(remote)));
			if (rn == FAB_NONE)
				continue;
			if (fabric_link(f, n, k, rn, rport, err))
				return -1;
		}
	}
	return 0;
}

int subnet_to_fabric(osm_subn_t *subn, struct fabric *f, struct fab_error *err)
{
	struct fab_guid_map map = { 0 };
	cl_map_item_t *it;
	int ret = -1;

	fabric_init(f);
	for (it = cl_qmap_head(&subn->node_guid_tbl); it != cl_qmap_end(&subn->node_guid_tbl);
	     it = cl_qmap_next(it)) {
		uint32_t n = add_osm_node((osm_node_t *)it, f);

		if (n == FAB_NONE || fab_guid_map_put(&map, f->nodes[n].guid, n)) {
			fab_error_set(err, "out of memory building the fabric model");
			goto out;
		}
	}
	if (add_links(subn, f, &map, err))
		goto out;
	ret = fabric_finalize(f, err);
out:
	fab_guid_map_free(&map);
	return ret;
}
