/*
 * Test shim: preloaded before libuct_gba.so, it makes the running UCX
 * report version 1.99.0 (ucp_get_version), so that the module's refusal to
 * register can be seen end to end with the stock ucx_info.
 */
void ucp_get_version(unsigned *major_version, unsigned *minor_version,
		     unsigned *release_number);

void ucp_get_version(unsigned *major_version, unsigned *minor_version,
		     unsigned *release_number)
{
	*major_version = 1;
	*minor_version = 99;
	*release_number = 0;
}
