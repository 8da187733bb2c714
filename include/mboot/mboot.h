/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_MBOOT_H
#define MBOOT_MBOOT_H

#include <mboot/version.h>
#include <mboot/error.h>
#include <mboot/digest.h>
#include <mboot/eventlog.h>
#include <mboot/events.h>
#include <mboot/replay.h>
#include <mboot/diff.h>
#include <mboot/artifacts.h>
#include <mboot/policy.h>
#include <mboot/predict.h>
#include <mboot/tpm.h>
#include <mboot/verify.h>
#include <mboot/seal.h>
#include <mboot/envelope.h>
#include <mboot/ssh-hostkey.h>
#include <mboot/cel.h>
#include <mboot/initramfs.h>
#include <mboot/pe.h>
#include <mboot/totp.h>
#include <mboot/tpm-policy.h>
#include <mboot/measure.h>
#include <mboot/attest.h>
#include <mboot/luks.h>
#include <mboot/grub-booted.h>
#include <mboot/ima.h>

#endif
