/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a policy file. Loads it and, when it loads, judges a small
 * crypto-agile log (GRUB strings, a separator, an application) against it in both banks, and
 * adds the log's values to it as a firmware set (mb_policy_add_firmware), whose output must load.
 * A policy with an "ima" section also judges a small IMA list (an allowed file, an ima-buf
 * entry, an entry whose template hash is not its fields', an ima-sig entry whose signature
 * names the key of the seed ima-keys.json and does not verify).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mb_event_log *sample_log(void)
{
	static const mb_spec_id_alg algs[] = { { MB_ALG_SHA1, 20 }, { MB_ALG_SHA256, 32 } };
	static const char cmd[] = "grub_cmd: linux /vmlinuz root=/dev/sda1 ro";
	static const char cmdline[] = "kernel_cmdline: /vmlinuz root=/dev/sda1 ro";
	mb_log_writer *w = NULL;
	mb_event_log *log = NULL;
	const uint8_t *bytes;
	size_t n;

	if (mb_log_writer_new(&w) < 0 || mb_log_writer_add_spec_id(w, algs, 2) < 0 ||
	    mb_log_writer_add_hashed(w, 4, MB_EV_SEPARATOR, "\0\0\0\0", 4, "\0\0\0\0", 4) < 0 ||
	    mb_log_writer_add_hashed(w, 4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, "app", 3, "app", 3) < 0 ||
	    mb_log_writer_add_hashed(w, 8, MB_EV_IPL, cmd + 10, strlen(cmd) - 10, cmd, sizeof(cmd)) < 0 ||
	    mb_log_writer_add_hashed(w, 8, MB_EV_IPL, cmdline + 16, strlen(cmdline) - 16, cmdline, sizeof(cmdline)) < 0)
		abort();
	bytes = mb_log_writer_data(w, &n);
	if (mb_event_log_parse(bytes, n, &log, NULL) < 0)
		abort();
	mb_log_writer_free(w);
	return log;
}

static mb_ima_log *sample_ima(void)
{
	static const char text[] =
		"10 513f5f8b0d0757c8df3b42c19d55773b6523debf1dc56c6d2950a1aa6e98f09b ima-ng "
		"sha256:4731be5e930e506a32d77911e701a92b02d7c4305141c77e43d3375044411cad boot_aggregate\n"
		"10 d52d203bfa049f0b1b38d1695182764148d72336066a99cbfd23cf15d575aa9d ima-ng "
		"sha256:0725efdcbd088250771e39e8d52b9c8e5246ea4bd8b94f4d6230c2f3a74772bb /init\n"
		"10 ab77285ccb9b08da737a97f3ea1dce6abdf2c955427a4ac91b7df7e4a3a065f5 ima-ng "
		"sha256:1b281530566ef125ed83dc8f8c4d2ec4c78be1a81d3b6a0abb170593928a12e3 /bin/sh\n"
		"10 0000000000000000000000000000000000000000000000000000000000000001 ima-ng "
		"sha256:7e372fd9b5915ca6497b4cfe06ad0eca41987e773bb68e755a1fcf6fa18d0fbe /lib/ld.so\n"
		"10 0000000000000000000000000000000000000000000000000000000000000002 ima-buf "
		"sha256:7e372fd9b5915ca6497b4cfe06ad0eca41987e773bb68e755a1fcf6fa18d0fbe kexec-cmdline 6f6b\n"
		"10 65e3a3d7830a05e7d5130dd43db86c342ab11aad65025ba301e609628befc46c ima-sig "
		"sha256:7e372fd9b5915ca6497b4cfe06ad0eca41987e773bb68e755a1fcf6fa18d0fbe /usr/bin/signed "
		"030204e1f1d3830002abcd\n";
	mb_ima_log *l = NULL;

	if (mb_ima_log_parse(text, sizeof(text) - 1, 0, &l, NULL) < 0)
		abort();
	return l;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static mb_ima_log *ima;
	mb_ima_policy_result ir;
	static mb_event_log *log;
	static mb_verify_result *verified;
	mb_policy *p = NULL;
	mb_policy_result res;
	char *json = NULL;

	if (!log) {
		mb_pcr_values *values = mb_pcr_values_new();

		log = sample_log();
		/* The log against its own replay: every PCR it extends verifies. */
		if (!values || mb_replay_log(log, SIZE_MAX, values, NULL, NULL) < 0 ||
		    mb_verify_log(log, NULL, values, NULL, &verified, NULL) < 0)
			abort();
		mb_pcr_values_free(values);
	}
	if (size > (1u << 20) || mb_policy_parse((const char *) data, size, &p, NULL) < 0)
		return 0;
	if (mb_policy_check(p, log, NULL, verified, MB_ALG_SHA256, &res, NULL) == 0)
		mb_policy_result_done(&res);
	if (mb_policy_check(p, log, NULL, verified, MB_ALG_SHA1, &res, NULL) == 0)
		mb_policy_result_done(&res);
	if (mb_policy_has_ima(p)) {
		if (!ima)
			ima = sample_ima();
		if (mb_policy_check_ima(p, ima, NULL, &ir, NULL) < 0)
			abort();
		mb_ima_policy_result_done(&ir);
	}
	mb_policy_free(p);
	p = NULL;
	if (mb_policy_add_firmware((const char *) data, size, log, 0, NULL, &json, NULL) == 0) {
		/* what add-firmware writes loads, and holds the log's firmware values */
		if (mb_policy_parse(json, strlen(json), &p, NULL) < 0 ||
		    mb_policy_check(p, log, NULL, verified, MB_ALG_SHA256, &res, NULL) < 0)
			abort();
		if (mb_policy_n_firmware_sets(p) && !res.firmware_set)
			abort();
		mb_policy_result_done(&res);
		mb_policy_free(p);
		free(json);
	}
	return 0;
}
