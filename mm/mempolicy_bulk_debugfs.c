// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs: drive the bulk page allocator under the caller's memory policy.
 *
 * The bulk allocator follows the task policy (weighted interleave has a
 * path of its own there), but user space has no call that reliably reaches
 * it: vmalloc, its main user, takes huge pages for large areas and kmalloc
 * for small ones.  This file gives tests and benchmarks a direct way in:
 *
 *   echo N > /sys/kernel/debug/mempolicy/bulk_alloc
 *        allocate N pages in one alloc_pages_bulk_array_mempolicy() call
 *        in the writer's context, record where they landed, free them
 *   cat /sys/kernel/debug/mempolicy/bulk_alloc
 *        "pages=N N0=.. N1=.. ..."
 *
 * Root only (debugfs); for testing, not for production kernels.
 */
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#define BULK_ALLOC_MAX_PAGES 65536

/* Result of the last allocation; bulk_lock serialises writers and readers. */
static DEFINE_MUTEX(bulk_lock);
static unsigned long bulk_last_pages;
static unsigned long bulk_last_node[MAX_NUMNODES];

static ssize_t bulk_alloc_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned long n, got, i;
	struct page **pages;
	int ret;

	ret = kstrtoul_from_user(ubuf, count, 0, &n);
	if (ret)
		return ret;
	if (!n || n > BULK_ALLOC_MAX_PAGES)
		return -EINVAL;
	/* Allocated before the measured call, so it is not counted. */
	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;

	got = alloc_pages_bulk_array_mempolicy(GFP_KERNEL, n, pages);

	mutex_lock(&bulk_lock);
	memset(bulk_last_node, 0, sizeof(bulk_last_node));
	bulk_last_pages = got;
	for (i = 0; i < got; i++) {
		bulk_last_node[page_to_nid(pages[i])]++;
		__free_page(pages[i]);
	}
	mutex_unlock(&bulk_lock);
	kvfree(pages);
	return got == n ? count : -ENOMEM;
}

static int bulk_alloc_show(struct seq_file *m, void *v)
{
	int nid;

	mutex_lock(&bulk_lock);
	seq_printf(m, "pages=%lu", bulk_last_pages);
	for_each_node_state(nid, N_MEMORY)
		seq_printf(m, " N%d=%lu", nid, bulk_last_node[nid]);
	seq_putc(m, '\n');
	mutex_unlock(&bulk_lock);
	return 0;
}

static int bulk_alloc_open(struct inode *inode, struct file *file)
{
	return single_open(file, bulk_alloc_show, NULL);
}

static const struct file_operations bulk_alloc_fops = {
	.owner = THIS_MODULE,
	.open = bulk_alloc_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = bulk_alloc_write,
};

static int __init mempolicy_bulk_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("mempolicy", NULL);

	debugfs_create_file("bulk_alloc", 0600, dir, NULL, &bulk_alloc_fops);
	return 0;
}
late_initcall(mempolicy_bulk_debugfs_init);
